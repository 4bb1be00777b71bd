"""The `sampler` config section: which engine generates rollouts, and its knobs.

Config only (no torch, no vllm): tracerl.train.config embeds it, tracerl.train.runner
builds the Sampler it names (docs/gpu.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SamplerBackend = Literal["transformers", "vllm"]

PREFIX_CACHE_MB = 2048
"""Default bound of the transformers sampler's prefix store: about 46,000 positions of
SmolLM2-135M's keys and values (46 KB each in float32), the contexts of 60 single-turn
BFCL episodes."""


@dataclass(frozen=True)
class SamplerSettings:
    """The `sampler` section: the generation backend of rollouts and evaluation."""

    backend: SamplerBackend = "transformers"
    """transformers (the policy's own model, CPU or GPU) or vllm (a vLLM engine on the
    same GPU, weights synced after every update; needs pip install 'tracerl[vllm]')."""
    gpu_memory_utilization: float = 0.3
    """vllm: fraction of the GPU's memory the engine may take (weights + KV cache); the
    rest is the learner's."""
    dtype: Literal["bfloat16", "float16", "float32"] = "bfloat16"
    """vllm: the engine's weight and activation dtype (the learner keeps `dtype`)."""
    sleep_level: Literal[0, 1, 2] = 1
    """vllm: during each update the engine sleeps (1: weights to CPU memory and KV cache
    freed; 2: both freed, since the sync reloads them anyway; 0: stays awake)."""
    enforce_eager: bool = False
    """vllm: skip CUDA graphs and torch.compile (faster start, slower decoding)."""
    max_model_len: int = 4096
    """vllm: the longest context (prompt + response) the engine plans its KV cache for."""
    max_rows: int = 0
    """transformers: the most rows one decoding batch holds; a call with more contexts
    decodes them in consecutive batches of at most this many (0 = all at once). Bounds
    the KV cache, which grows with rows x positions: a held-out evaluation of 64 tasks
    at three turns is the peak of a SmolLM2 run otherwise."""
    prefix_cache_mb: int = PREFIX_CACHE_MB
    """transformers: memory for the keys and values of contexts already prefilled, kept
    for the next calls, so a turn's prefill starts where the last turn's context ended
    instead of running the prompt again (tracerl.policy.prefix_store; emptied when the
    weights change and when a rollout batch's episodes are over; 0 = off). About 46 KB
    per position on SmolLM2-135M: 2 GB holds 60 BFCL single-turn episodes."""
    merge_lora: bool = True
    """transformers, with a LoRA adapter: decode through a copy of the model with the
    adapter merged into its linear layers, merged again after every update
    (tracerl.policy.merged_lora): one linear call per layer instead of peft's three and
    its casts. Costs the adapted layers' weights once more in memory; where the adapter
    cannot be merged (DoRA, LoRA bias, several adapters) decoding goes through peft."""

    def __post_init__(self) -> None:
        if not 0.0 < self.gpu_memory_utilization < 1.0:
            raise ValueError("sampler.gpu_memory_utilization must be in (0, 1), got "
                             f"{self.gpu_memory_utilization}")
        if self.max_rows < 0:
            raise ValueError(f"sampler.max_rows must be >= 0 (0 = no limit), got "
                             f"{self.max_rows}")
        if self.prefix_cache_mb < 0:
            raise ValueError(f"sampler.prefix_cache_mb must be >= 0 (0 = off), got "
                             f"{self.prefix_cache_mb}")
        if self.max_model_len < 16:
            raise ValueError(f"sampler.max_model_len must be >= 16, got {self.max_model_len}")

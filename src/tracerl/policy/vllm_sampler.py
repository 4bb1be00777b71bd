"""The vLLM sampler: rollouts through a vLLM engine on the learner's GPU, weights synced.

Written against vLLM 0.24.0 (the release pinned to torch 2.11, offline `LLM` API, V1
engine); every call below exists there and in later releases:

- `LLM(model=DIR, dtype=..., seed=..., gpu_memory_utilization=..., enable_sleep_mode=True,
  logprobs_mode="processed_logprobs", enable_lora=..., max_lora_rank=..., max_loras=1)`.
- `LLM.generate([{"prompt_token_ids": ids}, ...], [SamplingParams, ...], use_tqdm=False,
  lora_request=...)`: token ids in (a `TokensPrompt` is that dict), one SamplingParams
  per row, so each row has its own token budget (`max_tokens`).
- Weight sync in one process: `LLM.collective_rpc("reload_weights",
  kwargs={"weights_iterator": pairs, "is_checkpoint_format": True})`, which runs the
  worker's `model_runner.reload_weights` (the model's own `load_weights` with
  Hugging Face names, then the post-load processing; vllm/v1/worker/gpu_model_runner.py).
  Older engines reached the model as
  `llm.llm_engine.model_executor.driver_worker.model_runner.model.load_weights(...)`
  (V0); that path no longer exists in V1. The iterator of CUDA tensors is passed by
  reference only when the engine core runs in this process, hence
  `VLLM_ENABLE_V1_MULTIPROCESSING=0` (set before vllm is imported).
- LoRA: the adapter alone travels, as a peft directory and a new `LoRARequest(name, id,
  path)`; the previous id is dropped with `llm_engine.remove_lora`. Base weights sent to
  a LoRA engine are renamed to its wrapped layers' `base_layer` (read once through
  `LLM.apply_model`).
- Memory: `LLM.sleep(level)` before the update (1: weights to CPU, KV cache freed; 2: both
  freed), `LLM.wake_up(tags=["weights"])`, the load, then `wake_up(tags=["kv_cache"])`
  (vllm/v1/engine/core.py resumes scheduling once everything is resident).

The Sample contract (stops, budgets, log-probabilities) is tracerl.policy.vllm_io's.
Nothing here runs without vLLM and a CUDA GPU: `require_vllm` says which is missing.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from transformers import PreTrainedTokenizerBase

from tracerl.policy.adapter_files import (
    split_weights,
    wrapped_modules,
    wrapped_names,
    write_adapter,
)
from tracerl.policy.lora import adapter_base, has_adapter
from tracerl.policy.model import Policy
from tracerl.policy.sampler import StopText
from tracerl.policy.sampler_settings import SamplerSettings
from tracerl.policy.sampling import Sample, SamplingParams
from tracerl.policy.settings import LoraSettings
from tracerl.policy.vllm_io import engine_params, to_sample
from tracerl.policy.zoo import MissingExtraError

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The `max_lora_rank` values vLLM accepts (vllm/config/lora.py)."""


def check_vllm() -> None:
    """MissingExtraError naming everything the vLLM backend lacks here (imports no vllm)."""
    problems = []
    if importlib.util.find_spec("vllm") is None:
        problems.append("vLLM is not installed (pip install 'tracerl[vllm]')")
    if not torch.cuda.is_available():
        problems.append(f"this torch build ({torch.__version__}) sees no CUDA GPU")
    if problems:
        raise MissingExtraError(
            "sampler.backend=vllm needs vLLM and a CUDA GPU: " + "; ".join(problems)
            + ". Without them use sampler.backend=transformers (the default); see docs/gpu.md")


def require_vllm() -> ModuleType:
    """The vllm module, or MissingExtraError naming everything that is missing."""
    check_vllm()
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"  # in-process weight loads
    import vllm

    return vllm


def lora_rank(r: int) -> int:
    """The smallest `max_lora_rank` vLLM accepts that holds an adapter of rank r."""
    for rank in VLLM_LORA_RANKS:
        if rank >= r:
            return rank
    raise ValueError(f"lora.r={r} is above vLLM's largest LoRA rank {VLLM_LORA_RANKS[-1]}")


def engine_model_dir(policy: Policy) -> Path:
    """The directory the engine builds the model from (architecture, tokenizer): the
    policy's own, or with LoRA its base's. The weights in it need not be current: the
    first sync sends every weight."""
    model = policy.model
    path = Path(adapter_base(model) if has_adapter(model) else model.name_or_path or "")
    if not (path / "config.json").is_file():
        raise ValueError(
            f"sampler.backend=vllm builds its engine from a model directory; the policy "
            f"{policy.name!r} has none ({str(path)!r}). Save it (model.save_pretrained) "
            "and load it from there, or use a named model or model=DIR")
    return path


class VLLMSampler:
    """A Sampler (tracerl.policy.sampling) that generates with a vLLM engine, and a
    WeightSync target: `load_weights` takes the learner's named tensors."""

    generator = None
    """No torch generator: sampling randomness lives in the engine (seeded once), so a
    resumed run does not replay the same samples as the transformers sampler does."""

    def __init__(self, model_dir: str | Path, tokenizer: PreTrainedTokenizerBase,
                 settings: SamplerSettings, seed: int = 0,
                 lora: LoraSettings | None = None) -> None:
        self.lora = lora if lora is not None and lora.enabled else None
        if self.lora is not None and settings.sleep_level == 2:
            raise ValueError("sampler.sleep_level=2 frees the engine's base weights, which "
                             "LoRA syncs (the adapter alone) never resend; use 1 with LoRA")
        self._vllm = require_vllm()
        self.settings = settings
        self.model_dir = str(model_dir)
        self.tokenizer = tokenizer
        kwargs: dict[str, Any] = dict(
            model=self.model_dir, tokenizer=self.model_dir, dtype=settings.dtype, seed=seed,
            gpu_memory_utilization=settings.gpu_memory_utilization,
            max_model_len=settings.max_model_len, enforce_eager=settings.enforce_eager,
            enable_sleep_mode=settings.sleep_level > 0, enable_prefix_caching=True,
            logprobs_mode="processed_logprobs")
        if self.lora is not None:
            kwargs.update(enable_lora=True, max_lora_rank=lora_rank(self.lora.r), max_loras=1)
        self.llm = self._vllm.LLM(**kwargs)
        self._wrapped: set[str] = set()
        self._packed: dict[str, list[str]] = {}
        if self.lora is not None:  # which layers vLLM's LoRA wrappers hold (base_layer)
            names, self._packed = self.llm.apply_model(lambda m: (
                [n for n, _ in m.named_parameters()],
                dict(getattr(m, "packed_modules_mapping", {}))))[0]
            self._wrapped = wrapped_modules(names)
        self.asleep = 0
        """The level the engine sleeps at (0: awake)."""
        self.syncs = 0
        self._lora_request: Any = None
        self._lora_ids = itertools.count(1)
        self._adapters = tempfile.TemporaryDirectory(prefix="tracerl-lora-")
        self._stop_text: dict[tuple[str, ...], StopText] = {}

    @classmethod
    def for_policy(cls, policy: Policy, settings: SamplerSettings, seed: int = 0,
                   lora: LoraSettings | None = None) -> VLLMSampler:
        return cls(engine_model_dir(policy), policy.tokenizer, settings, seed, lora)

    # -- sampling --------------------------------------------------------------------
    def generate(self, contexts: list[list[int]], params: SamplingParams,
                 budgets: list[int] | None = None) -> list[Sample]:
        """Continue each context until a stop id, a completed stop string or its budget."""
        if not contexts:
            return []
        if any(not c for c in contexts):
            raise ValueError("every context needs at least one token")
        budgets = budgets or [params.max_new_tokens] * len(contexts)
        longest = max(len(c) + b for c, b in zip(contexts, budgets, strict=True))
        if longest > self.settings.max_model_len:
            raise ValueError(f"a context of {longest} tokens (prompt + budget) is longer "
                             f"than sampler.max_model_len={self.settings.max_model_len}")
        rows = [self._vllm.SamplingParams(**engine_params(params, b)) for b in budgets]
        self._wake()
        outputs = self.llm.generate([{"prompt_token_ids": list(c)} for c in contexts], rows,
                                    use_tqdm=False, lora_request=self._lora_request)
        stop_text = self._stops(params)
        samples = []
        for out, budget in zip(outputs, budgets, strict=True):
            done = out.outputs[0]
            samples.append(to_sample(done.token_ids, done.logprobs, done.finish_reason,
                                     params, budget, stop_text))
        return samples

    def _stops(self, params: SamplingParams) -> StopText | None:
        if not params.stop_strings:
            return None
        if params.stop_strings not in self._stop_text:
            self._stop_text[params.stop_strings] = StopText(self.tokenizer, params.stop_strings)
        return self._stop_text[params.stop_strings]

    def _wake(self) -> None:
        if self.asleep == 2:
            raise RuntimeError("the vLLM engine slept at level 2 (its weights were freed) "
                               "and no weights were synced since; sync before generating, "
                               "or use sampler.sleep_level=1")
        if self.asleep:
            self.llm.wake_up()
            self.asleep = 0

    # -- weight sync ---------------------------------------------------------------------
    def release_memory(self) -> None:
        """Sleep at `sampler.sleep_level` until the next sync or `generate`."""
        if self.settings.sleep_level and not self.asleep:
            self.llm.sleep(level=self.settings.sleep_level)
            self.asleep = self.settings.sleep_level

    def load_weights(self, weights: Iterable[tuple[str, Any]]) -> None:
        """The learner's named tensors into the engine: base weights in place, a LoRA
        adapter as a new adapter request (tracerl.policy.sampling.WeightSync)."""
        base, adapter = split_weights(weights)
        if adapter and self.lora is None:
            raise ValueError("LoRA weights were synced into an engine built without LoRA "
                             "(VLLMSampler(lora=...) must match the learner's lora section)")
        if self.asleep == 2 and not base:
            raise RuntimeError("the engine slept at level 2: sync every weight "
                               "(everything=True), not only the adapter")
        if self.asleep:
            self.llm.wake_up(tags=["weights"])
        if base and self._wrapped:
            base = wrapped_names(base, self._wrapped, self._packed)
        if base:
            self.llm.collective_rpc("reload_weights", kwargs={
                "weights_iterator": iter(base), "is_checkpoint_format": True})
        if adapter:
            self._push_adapter(adapter)
        if self.asleep:
            self.llm.wake_up(tags=["kv_cache"])
            self.asleep = 0
        self.llm.reset_prefix_cache()  # cached KV of the old weights is stale
        self.syncs += 1

    def _push_adapter(self, tensors: dict[str, torch.Tensor]) -> None:
        assert self.lora is not None
        lora_id = next(self._lora_ids)
        path = write_adapter(Path(self._adapters.name) / f"v{lora_id}", tensors, self.lora,
                             self.model_dir)
        previous = self._lora_request
        request = importlib.import_module("vllm.lora.request").LoRARequest
        self._lora_request = request(f"tracerl-v{lora_id}", lora_id, str(path))
        if previous is not None:
            self.llm.llm_engine.remove_lora(previous.lora_int_id)
            shutil.rmtree(previous.lora_path, ignore_errors=True)

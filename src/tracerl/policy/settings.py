"""How the policy is held for training: weight precision and the LoRA adapter.

Config sections only (no torch): tracerl.train.config embeds them, tracerl.policy.lora
and tracerl.policy.precision act on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Precision = Literal["auto", "float32", "bfloat16", "bf16-autocast"]
"""float32; bfloat16 weights (meant for a frozen LoRA base: the adapter stays float32);
float32 weights with the training forward passes under bfloat16 autocast; or auto:
bfloat16 where the device has bfloat16 arithmetic, else float32 (resolved when the config
is built, so a run records what it ran with: tracerl.policy.precision.resolve_precision)."""

# Every linear layer of a Llama-style block (Llama, Qwen2/3, Mistral, SmolLM2): adapting
# all of them rather than only q/v is what QLoRA (Dettmers et al. 2023, section 4) found
# necessary to match full fine-tuning.
LLAMA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class LoraSettings:
    """The `lora` section: a low-rank adapter (Hu et al. 2021) instead of full fine-tuning."""

    r: int = 0
    """Adapter rank (0 = off: full fine-tuning; 8-64 for LoRA)."""
    alpha: float = 32.0
    """Scale of the adapter's update: it is multiplied by alpha / r."""
    dropout: float = 0.0
    """Dropout on the adapter's input; keep 0 for RL (it makes trainer logprobs noisy)."""
    targets: list[str] = field(default_factory=lambda: list(LLAMA_TARGETS))
    """Names of the linear modules that get an adapter (default: every Llama-style one)."""

    def __post_init__(self) -> None:
        if self.r < 0:
            raise ValueError(f"lora.r must be >= 0 (0 = off), got {self.r}")
        if self.alpha <= 0:
            raise ValueError(f"lora.alpha must be > 0, got {self.alpha}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"lora.dropout must be in [0, 1), got {self.dropout}")
        if self.r and not self.targets:
            raise ValueError("lora.targets must name at least one module when lora.r > 0")

    @property
    def enabled(self) -> bool:
        return self.r > 0

"""How the run's config shapes the policy for training: `dtype`, `gradient_checkpointing`
and the `lora` adapter; and the adapter folded into the base at each stage boundary.

The Trainer loads a model (or a checkpoint) and calls `prepare_policy`; at the start of
every stage it calls `start_stage`. SFT, DPO and RL need nothing else: they optimise
`trainable_parameters(model)` and take the reference from tracerl.train.reference.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from tracerl.policy.lora import adapter_base, apply_lora, fold_adapter, has_adapter, save_base
from tracerl.policy.model import Policy
from tracerl.policy.precision import autocast_dtype, set_autocast
from tracerl.train.config import TrainConfig

log = logging.getLogger(__name__)


def prepare_policy(policy: Policy, config: TrainConfig) -> Policy:
    """Gradient checkpointing, a fresh adapter when `lora.r` > 0 (unless the policy
    already has one: a resumed checkpoint), and autocast of the training forward passes."""
    if config.gradient_checkpointing:
        enable_gradient_checkpointing(policy.model)
    if config.lora.enabled and not has_adapter(policy.model):
        policy = apply_lora(policy, config.lora)
    if config.dtype == "bfloat16" and not config.lora.enabled:
        log.warning("dtype=bfloat16 without LoRA trains bfloat16 weights: updates below "
                    "their precision (~0.4%% of a weight) are lost; bf16-autocast keeps "
                    "float32 weights")
    set_autocast(policy.model, autocast_dtype(config.dtype, lora=has_adapter(policy.model)))
    return policy


def enable_gradient_checkpointing(model: torch.nn.Module) -> None:
    """Recompute each block in the backward pass while the model trains (not in eval)."""
    # Non-reentrant: gradients reach the adapter even though the inputs of the
    # checkpointed blocks (frozen embeddings) do not require grad.
    kwargs = {"use_reentrant": False}
    enable = getattr(model, "activation_checkpointing_enable", None)  # newer transformers
    if enable is not None:
        enable(kwargs)
    else:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)


def stage_base(run_dir: Path, stage_index: int) -> Path:
    """Where the base of stage `stage_index` (> 0) is saved when LoRA is on."""
    return run_dir / f"base-stage{stage_index}"


def start_stage(policy: Policy, run_dir: Path, stage_index: int) -> None:
    """Fold the adapter trained so far into the base, so that this stage's reference
    (the disabled adapter) is the policy at its start; the new base is saved once.

    A no-op without an adapter, for the first stage, and when resuming inside a stage
    (the adapter already sits on this stage's base).
    """
    if not has_adapter(policy.model) or stage_index == 0:
        return
    base = stage_base(run_dir, stage_index)
    if adapter_base(policy.model).resolve() == base.resolve():
        return
    fold_adapter(policy.model)
    save_base(policy, base)

"""Keeping a separate inference engine's weights equal to the learner's (weight sync).

The transformers sampler samples from the learner's own model object, so it never needs
a sync. An engine holding its own copy (vLLM on the same GPU; engine actors on others)
implements `WeightSync` (tracerl.policy.sampling: `load_weights(named tensors)`) and,
where it can give memory back while the learner updates, `ReleasesMemory`.

`EngineSync` is the learner's side, used by the Trainer and `rl_step`:

    engine.release()          # before the update: the engine sleeps (vLLM: frees the
                              # KV cache, weights to CPU), so both fit on one GPU
    ... update ...
    engine.push(model)        # after it: the trained tensors (LoRA: the adapter alone)
    engine.push(model, everything=True)   # at a stage start, a resume, a LoRA fold

Names are the learner model's `named_parameters()` names (with LoRA, peft's:
`base_model.model.<name>.base_layer.weight`, `...lora_A.default.weight`); tensors stay
on the learner's device and are not copied: an engine in the same process copies them
into its own parameters, one across processes serialises them (async rollouts use
tracerl.policy.weights for the copy that travels).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

import torch

from tracerl.policy.sampling import WeightSync


@runtime_checkable
class ReleasesMemory(Protocol):
    """An engine that can free device memory while the learner updates."""

    def release_memory(self) -> None:
        """Free what can be freed until the next `load_weights` or `generate`."""
        ...


def learner_weights(model: torch.nn.Module, everything: bool = False
                    ) -> Iterator[tuple[str, torch.Tensor]]:
    """The learner's (name, tensor) pairs: those an update trains (requires_grad), or
    every parameter with `everything` (a tied embedding appears once)."""
    for name, param in model.named_parameters():
        if everything or param.requires_grad:
            yield name, param.detach()


class EngineSync:
    """Syncs the learner's weights into a sampler that holds its own copy."""

    def __init__(self, sampler: WeightSync) -> None:
        if not isinstance(sampler, WeightSync):
            raise TypeError(f"{type(sampler).__name__} has no load_weights(): it cannot "
                            "be synced with the learner")
        self.sampler = sampler
        self.pushes = 0

    def release(self) -> None:
        """Before an update: let the engine free memory (if it can)."""
        if isinstance(self.sampler, ReleasesMemory):
            self.sampler.release_memory()

    def push(self, model: torch.nn.Module, everything: bool = False) -> None:
        """After an update (or a change of base weights with `everything`): the engine
        samples from `model`'s current weights from its next `generate` on."""
        self.sampler.load_weights(learner_weights(model, everything))
        self.pushes += 1

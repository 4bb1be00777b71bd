"""Moving trained weights from the learner's model into a sampler's copy (weight sync).

`trained_weights` snapshots what an update can change (the parameters that require
grad: all of them for full fine-tuning, the adapter with LoRA) so the learner can go on
updating while the copy travels; `load_named` writes such a snapshot into another model
of the same architecture.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch


def trained_weights(model: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
    """Detached copies of the parameters that require grad, by name (on the CPU)."""
    return [(n, p.detach().to("cpu", copy=True)) for n, p in model.named_parameters()
            if p.requires_grad]


@torch.no_grad()
def load_named(model: torch.nn.Module, weights: Iterable[tuple[str, torch.Tensor]]) -> int:
    """Copy each named tensor into `model`'s parameter of that name; returns how many.

    Raises KeyError for a name the model does not have and ValueError for a shape that
    differs, before anything is copied.
    """
    params = dict(model.named_parameters())
    pairs = list(weights)
    for name, tensor in pairs:
        if name not in params:
            raise KeyError(f"weight sync: the sampler's model has no parameter {name!r}")
        if params[name].shape != tensor.shape:
            raise ValueError(f"weight sync: {name} has shape {tuple(tensor.shape)}, the "
                             f"sampler's model {tuple(params[name].shape)}")
    for name, tensor in pairs:
        params[name].copy_(tensor)
    return len(pairs)

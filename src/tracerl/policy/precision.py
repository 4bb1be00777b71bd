"""Weight precision and bfloat16 autocast of the training forward passes.

`dtype=bfloat16` loads the weights in bfloat16. `dtype=bf16-autocast` keeps float32
weights (and float32 gradients and optimiser state) and runs the training forward passes
under `torch.autocast(..., dtype=torch.bfloat16)`; the backward pass then follows the
forward's dtypes (autocast is left before `backward()`, as torch recommends).

Every training forward pass goes through `tracerl.train.batch.token_logprobs` (or the
critic), which sees only the model, so the choice is recorded on the model itself
(`set_autocast`) and read there (`autocast`). The sampler does not autocast: behaviour
logprobs come from float32 weights, and `rl.tis_cap` corrects for the mismatch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from tracerl.policy.settings import Precision

_ATTRIBUTE = "_tracerl_autocast"
WEIGHT_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "bfloat16": torch.bfloat16, "bf16-autocast": torch.float32}


def weights_dtype(precision: Precision) -> torch.dtype:
    """The dtype the weights are loaded in."""
    return WEIGHT_DTYPES[precision]


def autocast_dtype(precision: Precision) -> torch.dtype | None:
    """The dtype training forward passes autocast to (None: no autocast)."""
    return torch.bfloat16 if precision == "bf16-autocast" else None


def set_autocast(model: torch.nn.Module, dtype: torch.dtype | None) -> None:
    """Make the training forward passes of `model` autocast to `dtype` (None: off)."""
    setattr(model, _ATTRIBUTE, dtype)


def model_autocast(model: torch.nn.Module) -> torch.dtype | None:
    """The autocast dtype recorded on `model` (None when off)."""
    return getattr(model, _ATTRIBUTE, None)


@contextlib.contextmanager
def autocast(model: torch.nn.Module) -> Iterator[None]:
    """Autocast as recorded on `model` for the forward pass inside; nothing when off."""
    dtype = model_autocast(model)
    if dtype is None:
        yield
        return
    device = next(model.parameters()).device.type
    with torch.autocast(device_type=device, dtype=dtype):
        yield

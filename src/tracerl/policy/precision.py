"""Weight precision and bfloat16 autocast of the training forward passes.

`dtype=bfloat16` loads the weights in bfloat16 (with a LoRA adapter, which stays float32,
training forward passes autocast to bfloat16 too). `dtype=bf16-autocast` keeps float32
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
from pathlib import Path

import torch

from tracerl.policy.settings import Precision

_ATTRIBUTE = "_tracerl_autocast"
WEIGHT_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32, "bfloat16": torch.bfloat16, "bf16-autocast": torch.float32}


# CPU flags (Linux /proc/cpuinfo) of bfloat16 arithmetic. Without one, torch runs a bfloat16
# matmul through conversions: 146x slower than float32 on an AVX2-only EPYC
# (docs/benchmarks.md, "Gemma 3 270M"), where AMX made it 3.5x faster.
BF16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_has_bf16(cpuinfo: str | None = None) -> bool:
    """Whether the CPU has bfloat16 arithmetic (flags read from /proc/cpuinfo; False
    where it cannot be read)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return bool(BF16_CPU_FLAGS & set(line.partition(":")[2].split()))
    return False


def resolve_precision(precision: Precision, device: str) -> Precision:
    """`auto` made concrete for `device`: bfloat16 where it has bfloat16 arithmetic (a CUDA
    device that supports it, a CPU with AVX-512 BF16 or AMX), else float32. Other values
    pass through."""
    if precision != "auto":
        return precision
    if device.startswith("cuda"):
        fast = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    else:
        fast = device == "cpu" and cpu_has_bf16()
    return "bfloat16" if fast else "float32"


def weights_dtype(precision: Precision) -> torch.dtype:
    """The dtype the weights are loaded in."""
    return WEIGHT_DTYPES[precision]


def autocast_dtype(precision: Precision, lora: bool = False) -> torch.dtype | None:
    """The dtype training forward passes autocast to (None: no autocast): bfloat16 for
    bf16-autocast, and for a LoRA adapter (float32, as peft keeps it) on a bfloat16 base,
    whose products then run in bfloat16 too."""
    if precision == "bf16-autocast" or (precision == "bfloat16" and lora):
        return torch.bfloat16
    return None


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
    with torch.autocast(device_type=device, dtype=dtype), _adapter_inputs_as_they_are(model):
        yield


@contextlib.contextmanager
def _adapter_inputs_as_they_are(model: torch.nn.Module) -> Iterator[None]:
    """peft casts each adapter's input to the adapter's dtype (float32) before autocast
    casts it back to bfloat16: two copies per adapted layer, and the float32 one is what
    the backward pass keeps (on SmolLM2 with every linear layer adapted, most of an
    update's activation memory). Under autocast the cast is pointless, so it is off
    inside; the sampler, outside, keeps peft's default."""
    layers = [m for m in model.modules() if hasattr(m, "cast_input_dtype_enabled")]
    for m in layers:
        m.cast_input_dtype_enabled = False
    try:
        yield
    finally:
        for m in layers:
            m.cast_input_dtype_enabled = True

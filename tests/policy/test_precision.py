import typing

import torch

from tracerl.policy.precision import (
    WEIGHT_DTYPES,
    autocast,
    cpu_has_bf16,
    resolve_precision,
    set_autocast,
    weights_dtype,
)
from tracerl.policy.settings import Precision


def test_every_configurable_precision_has_a_weight_dtype():
    assert set(typing.get_args(Precision)) == set(WEIGHT_DTYPES) | {"auto"}
    assert weights_dtype("bfloat16") == torch.bfloat16
    assert weights_dtype("bf16-autocast") == torch.float32


def test_autocast_follows_what_the_model_records():
    layer = torch.nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with autocast(layer):
        assert layer(x).dtype == torch.float32
    set_autocast(layer, torch.bfloat16)
    with autocast(layer):
        assert layer(x).dtype == torch.bfloat16
    assert layer(x).dtype == torch.float32 and layer.weight.dtype == torch.float32


def test_a_lora_adapter_on_a_bfloat16_base_trains_under_autocast(tiny_policy):
    """dtype=bfloat16 with LoRA: training passes autocast, peft's float32 copy of each
    adapter's input is skipped inside (and restored outside, where the sampler runs),
    and the gradients are those of peft's float32 path to bfloat16 rounding."""
    import copy
    from dataclasses import replace

    from tracerl.policy.lora import apply_lora
    from tracerl.policy.precision import autocast_dtype
    from tracerl.policy.settings import LoraSettings
    from tracerl.train.batch import token_logprobs

    assert autocast_dtype("bfloat16") is None
    assert autocast_dtype("bfloat16", lora=True) == torch.bfloat16
    base = copy.deepcopy(tiny_policy.model).to(torch.bfloat16)
    model = apply_lora(replace(tiny_policy, model=base), LoraSettings(r=4, alpha=8)).model
    for name, p in model.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(p, std=0.02)
    ids = torch.randint(4, 90, (2, 12), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)

    def grads():
        model.zero_grad(set_to_none=True)
        token_logprobs(model, ids, mask).sum().backward()
        return [p.grad.float().clone() for p in model.parameters() if p.requires_grad]

    want = grads()  # peft's float32 adapter path
    set_autocast(model, torch.bfloat16)
    seen = []
    layer = next(m for m in model.modules() if hasattr(m, "cast_input_dtype_enabled"))
    hook = layer.register_forward_pre_hook(lambda m, _a: seen.append(m.cast_input_dtype_enabled))
    try:
        got = grads()
    finally:
        hook.remove()
    assert seen == [False] and layer.cast_input_dtype_enabled  # off inside only
    for g, w in zip(got, want, strict=True):
        torch.testing.assert_close(g, w, atol=0.02 * float(w.abs().max()) + 1e-6, rtol=0.05)


AVX2_ONLY = """processor\t: 0
model name\t: AMD EPYC
flags\t\t: fpu vme sse sse2 avx avx2 fma bmi2 avx512f_absent
"""
AMX = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu sse2 avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile amx_int8
"""


def test_auto_is_bfloat16_only_where_the_cpu_has_bfloat16_arithmetic(monkeypatch):
    from tracerl.policy import precision
    from tracerl.train.config import TrainConfig

    assert not cpu_has_bf16(AVX2_ONLY) and cpu_has_bf16(AMX)
    assert not cpu_has_bf16("no flags line here")
    assert cpu_has_bf16("flags : avx2 avx512_bf16\n")
    for info, want in ((AVX2_ONLY, "float32"), (AMX, "bfloat16")):
        monkeypatch.setattr(precision, "cpu_has_bf16", lambda info=info: cpu_has_bf16(info))
        assert resolve_precision("auto", "cpu") == want
        # the config records what runs; explicit choices pass through untouched
        assert TrainConfig(dtype="auto").dtype == want
        assert TrainConfig(dtype="bfloat16").dtype == "bfloat16"
        assert TrainConfig(dtype="float32").dtype == "float32"
    # this machine's own answer is one of the two
    monkeypatch.undo()
    assert resolve_precision("auto", "cpu") in ("float32", "bfloat16")
    assert resolve_precision("auto", "cuda") == (
        "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported()
        else "float32")


def test_the_zoo_presets_choose_auto():
    from tracerl.policy.zoo import MODELS

    assert {m.preset["dtype"] for m in MODELS.values()} == {"auto"}

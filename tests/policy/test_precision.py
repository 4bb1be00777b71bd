import typing

import torch

from tracerl.policy.precision import WEIGHT_DTYPES, autocast, set_autocast, weights_dtype
from tracerl.policy.settings import Precision


def test_every_configurable_precision_has_a_weight_dtype():
    assert set(typing.get_args(Precision)) == set(WEIGHT_DTYPES)
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

import pytest
import torch

from tracerl.policy.lora import adapter_base, trainable_parameters
from tracerl.policy.model import load_policy
from tracerl.policy.precision import weights_dtype
from tracerl.train import configlib
from tracerl.train.batch import token_logprobs
from tracerl.train.config import TrainConfig
from tracerl.train.model_setup import prepare_policy, stage_base, start_stage

IDS = torch.tensor([[5, 17, 33, 8, 61, 12, 40, 2], [9, 9, 70, 3, 22, 1, 14, 2]])
MASK = torch.ones_like(IDS)


def config(*overrides: str) -> TrainConfig:
    return configlib.load(TrainConfig, None, list(overrides))


def prepared(directory: str, *overrides: str):
    cfg = config(*overrides)
    torch.manual_seed(0)  # the same adapter initialisation for every copy
    return prepare_policy(load_policy(directory, dtype=weights_dtype(cfg.dtype)), cfg)


def step(policy) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Log-probabilities and the gradients of their sum, in training mode."""
    model = policy.model
    model.train()
    model.zero_grad(set_to_none=True)
    logp = token_logprobs(model, IDS, MASK)
    logp.sum().backward()
    return logp.detach(), [p.grad for p in trainable_parameters(model)]


@pytest.mark.parametrize("lora", ["lora.r=0", "lora.r=4"])
def test_gradient_checkpointing_gives_the_same_gradients(fresh_tiny_policy, lora):
    directory = fresh_tiny_policy.model.name_or_path
    checked = prepared(directory, lora, "gradient_checkpointing=true")
    calls = []
    # a pre-hook: the recomputation stops early, once it has what the backward needs
    mlp = checked.model.get_decoder().layers[0].mlp
    mlp.register_forward_pre_hook(lambda *_: calls.append(1))
    want, want_grads = step(prepared(directory, lora))
    got, got_grads = step(checked)
    assert len(calls) == 2  # the block ran again in the backward pass
    torch.testing.assert_close(got, want, atol=1e-6, rtol=0)
    assert len(got_grads) == len(want_grads) > 0
    for g, w in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(g, w, atol=1e-6, rtol=1e-5)


def test_bfloat16_weights_keep_a_float32_adapter(fresh_tiny_policy):
    directory = fresh_tiny_policy.model.name_or_path
    want, _ = step(prepared(directory, "lora.r=4"))
    policy = prepared(directory, "dtype=bfloat16", "lora.r=4")
    frozen = {p.dtype for p in policy.model.parameters() if not p.requires_grad}
    assert frozen == {torch.bfloat16}
    assert {p.dtype for p in trainable_parameters(policy.model)} == {torch.float32}
    got, grads = step(policy)
    assert got.dtype == torch.float32 and all(g is not None for g in grads)
    torch.testing.assert_close(got, want, atol=0.1, rtol=0)  # bfloat16: ~3 digits


def test_bf16_autocast_keeps_float32_weights_and_gradients(fresh_tiny_policy):
    directory = fresh_tiny_policy.model.name_or_path
    want, _ = step(prepared(directory))
    policy = prepared(directory, "dtype=bf16-autocast")
    got, grads = step(policy)
    assert {p.dtype for p in policy.model.parameters()} == {torch.float32}
    assert {g.dtype for g in grads} == {torch.float32}
    assert not torch.equal(got, want)  # the forward really ran in bfloat16
    torch.testing.assert_close(got, want, atol=0.1, rtol=0)


def test_a_stage_boundary_folds_the_adapter_into_a_saved_base_once(tmp_path, lora_policy):
    model = lora_policy.model
    first_base = adapter_base(model)
    start_stage(lora_policy, tmp_path, 0)  # the first stage trains on the model's own base
    assert adapter_base(model) == first_base

    adapted = token_logprobs(model, IDS, MASK).detach()
    start_stage(lora_policy, tmp_path, 1)
    assert adapter_base(model) == stage_base(tmp_path, 1).resolve()
    saved = load_policy(stage_base(tmp_path, 1)).model
    torch.testing.assert_close(token_logprobs(saved, IDS, MASK).detach(), adapted,
                               atol=1e-5, rtol=0)
    assert all(not p.any() for n, p in model.named_parameters() if "lora_B" in n)

    with torch.no_grad():  # train a little inside stage 1, then "resume" into it
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.fill_(0.01)
    start_stage(lora_policy, tmp_path, 1)
    assert all(p.eq(0.01).all() for n, p in model.named_parameters() if "lora_B" in n)

import torch

from tracerl.policy.lora import adapter_base
from tracerl.policy.model import load_policy
from tracerl.train.batch import token_logprobs
from tracerl.train.reference import Reference

IDS = torch.tensor([[5, 17, 33, 8, 61, 12, 40], [9, 9, 70, 3, 22, 1, 14]])
MASK = torch.ones_like(IDS)


def test_with_lora_the_reference_is_the_base_exactly_and_no_copy(lora_policy):
    model = lora_policy.model
    ref = Reference.of(model)
    assert ref.model is model
    base = load_policy(adapter_base(model)).model
    with torch.no_grad():
        want = token_logprobs(base, IDS, MASK, 0.7)
        adapted = token_logprobs(model, IDS, MASK, 0.7)
    got = ref.logprobs(IDS, MASK, 0.7)
    assert torch.equal(got, want) and not torch.equal(got, adapted)
    assert not got.requires_grad
    model.train()
    ref.logprobs(IDS, MASK)
    assert model.training  # the policy's mode is left as it was
    assert not torch.equal(token_logprobs(model, IDS, MASK).detach(), want)  # adapter back on


def test_without_lora_the_reference_is_a_frozen_copy(fresh_tiny_policy):
    model = fresh_tiny_policy.model
    ref = Reference.of(model)
    before = ref.logprobs(IDS, MASK)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1)
    assert torch.equal(ref.logprobs(IDS, MASK), before)
    assert not any(p.requires_grad for p in ref.model.parameters())

"""The critic under LoRA shares the policy's frozen base: policy, reference and critic hold
one copy of the base weights in memory; without LoRA the critic copies every weight."""

import torch

from tracerl.train.optim import adamw
from tracerl.train.reference import Reference
from tracerl.train.value import ValueModel


def _stored_elements(*modules: torch.nn.Module) -> int:
    """Parameter elements held in memory by `modules` together (shared storage counted once)."""
    seen: dict[int, int] = {}
    for module in modules:
        for p in module.parameters():
            seen[p.untyped_storage().data_ptr()] = p.numel()
    return sum(seen.values())


def _base_elements(model: torch.nn.Module) -> int:
    return sum(p.numel() for n, p in model.named_parameters() if "lora_" not in n)


def test_under_lora_policy_reference_and_critic_hold_one_base(lora_policy):
    model = lora_policy.model
    base = _base_elements(model)
    adapter = sum(p.numel() for p in model.parameters() if p.requires_grad)
    critic = ValueModel(model)
    reference = Reference.of(model)
    alone = _stored_elements(model)
    assert alone == base + adapter
    together = _stored_elements(model, reference.model, critic)
    # what the critic adds is its own adapter and head, not a second base
    head = sum(p.numel() for p in critic.head.parameters())
    assert together == alone + adapter + head
    assert together < 2 * base


def test_without_lora_the_critic_copies_the_weights(fresh_tiny_policy):
    model = fresh_tiny_policy.model
    critic = ValueModel(model)
    backbone = sum(p.numel() for p in model.get_decoder().parameters())
    head = sum(p.numel() for p in critic.head.parameters())
    assert _stored_elements(model, critic) == _stored_elements(model) + backbone + head


def test_training_the_critic_moves_its_adapter_not_the_policy(lora_policy):
    model = lora_policy.model
    critic = ValueModel(model)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    ids = torch.randint(5, 90, (2, 12), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    opt = adamw(critic.parameters(), 1e-2)
    for _ in range(2):
        opt.zero_grad()
        (critic(ids, mask) - 1.0).pow(2).mean().backward()
        opt.step()
    for n, p in model.named_parameters():
        assert torch.equal(p, before[n]), n
    moved = [n for n, p in critic.backbone.named_parameters()
             if "lora_" in n and not torch.equal(p, before[f"base_model.model.model.{n}"])]
    assert moved
    shared = [p for p in critic.backbone.parameters() if not p.requires_grad]
    assert shared and all(p.grad is None for p in shared)

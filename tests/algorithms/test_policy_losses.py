import math

import pytest
import torch

from tracerl.algorithms.kl import kl_in_reward
from tracerl.algorithms.losses import (
    cispo_policy_loss,
    clipped_policy_loss,
    clipped_value_loss,
    dpo_loss,
    gspo_policy_loss,
    truncated_is_weights,
)
from tracerl.algorithms.shaping import overlong_penalty

ONE = torch.ones(1, 1)


def test_dual_clip_caps_negative_advantage_loss():
    # ratio 3, A = -1: PPO loss max(3, 1.2) = 3; dual clip c=2 caps it at 2
    logp, old = torch.tensor([[math.log(3.0)]]), torch.zeros(1, 1)
    plain, _ = clipped_policy_loss(logp, old, -ONE, ONE, 0.2, 0.2)
    dual, _ = clipped_policy_loss(logp, old, -ONE, ONE, 0.2, 0.2, dual_clip=2.0)
    assert plain.item() == pytest.approx(3.0)
    assert dual.item() == pytest.approx(2.0)


def test_dual_clip_leaves_positive_advantages_alone():
    logp = torch.tensor([[math.log(3.0)]])
    a, _ = clipped_policy_loss(logp, torch.zeros(1, 1), ONE, ONE, 0.2, 0.2, dual_clip=2.0)
    assert a.item() == pytest.approx(-1.2)


def test_gspo_uses_one_ratio_per_sequence():
    # token log-ratios 0.2 and 0.0 -> sequence ratio exp(0.1) on both tokens
    old = torch.tensor([[-1.0, -1.0]])
    logp = (old + torch.tensor([[0.2, 0.0]])).requires_grad_()
    loss, stats = gspo_policy_loss(logp, old, torch.ones(1, 2), torch.ones(1, 2), 0.2, 0.2)
    assert loss.item() == pytest.approx(-math.exp(0.1))
    assert stats.ratio_mean == pytest.approx(math.exp(0.1))
    loss.backward()
    assert torch.allclose(logp.grad, torch.full((1, 2), -math.exp(0.1) / 2))


def test_cispo_keeps_the_gradient_of_clipped_tokens():
    # ratio 2 > 1.28: PPO's gradient vanishes, CISPO's is -1.28 * A
    old = torch.tensor([[-1.0]])
    logp = (old + math.log(2.0)).requires_grad_()
    loss, stats = cispo_policy_loss(logp, old, ONE, ONE, clip_high=0.28)
    assert loss.item() == pytest.approx(-1.28 * logp.item())
    loss.backward()
    assert logp.grad.item() == pytest.approx(-1.28)
    assert stats.clip_fraction == 1.0
    ppo_logp = (old + math.log(2.0)).requires_grad_()
    clipped_policy_loss(ppo_logp, old, ONE, ONE, 0.2, 0.28)[0].backward()
    assert ppo_logp.grad.item() == 0.0


def test_truncated_is_weights_cap_the_ratio():
    w = truncated_is_weights(torch.tensor([[-1.0, -2.0]]), torch.tensor([[-2.0, -1.0]]), cap=2.0)
    assert torch.allclose(w, torch.tensor([[2.0, math.exp(-1.0)]]))


def test_policy_loss_weights_scale_each_token():
    logp, old = torch.zeros(1, 2), torch.zeros(1, 2)
    loss, _ = clipped_policy_loss(logp, old, torch.ones(1, 2), torch.ones(1, 2),
                                  weights=torch.tensor([[2.0, 0.0]]))
    assert loss.item() == pytest.approx(-1.0)


def test_value_loss_clips_around_the_old_values():
    # V 1.5, old 1.0, R 2.0, clip 0.2: max(0.25, (1.2 - 2)^2 = 0.64) / 2
    v, old, ret = torch.tensor([[1.5]]), torch.tensor([[1.0]]), torch.tensor([[2.0]])
    assert clipped_value_loss(v, old, ret, ONE, clip=0.2).item() == pytest.approx(0.32)
    assert clipped_value_loss(v, old, ret, ONE, clip=None).item() == pytest.approx(0.125)


def test_dpo_loss_hand_computed():
    # beta 0.5: margin = 0.5 * (-1 + 2) - 0.5 * (-3 + 2) = 1
    loss, stats = dpo_loss(torch.tensor([-1.0]), torch.tensor([-3.0]), torch.tensor([-2.0]),
                           torch.tensor([-2.0]), beta=0.5)
    assert loss.item() == pytest.approx(math.log1p(math.exp(-1.0)))
    assert stats.reward_accuracy == 1.0 and stats.margin == pytest.approx(1.0)


def test_overlong_penalty_ramps_to_minus_one():
    out = overlong_penalty(torch.tensor([70, 80, 90, 100, 120]), max_len=100, cache_len=20)
    assert torch.allclose(out, torch.tensor([0.0, 0.0, -0.5, -1.0, -1.0]))


def test_kl_in_reward_subtracts_on_action_tokens():
    out = kl_in_reward(torch.tensor([[0.0, 1.0]]), torch.tensor([[0.5, 0.5]]), 0.1,
                       torch.tensor([[0, 1]]))
    assert torch.allclose(out, torch.tensor([[0.0, 0.95]]))

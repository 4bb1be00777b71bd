import math

import torch

from tracerl.algorithms.turn_credit import (
    discounted_turn_returns,
    gigpo_advantages,
    gigpo_step_advantages,
    mt_grpo_advantages,
)

NAN = math.nan


def test_mt_grpo_adds_group_normalised_turn_rewards():
    # episode: [1, 0] -> [+1, -1]. turns {1, 0, 0}: mean 1/3, std sqrt(2/9)
    # -> +sqrt(2), -sqrt(2)/2, -sqrt(2)/2; weight 0.5
    adv = mt_grpo_advantages(torch.tensor([[1.0, 0.0]]),
                             torch.tensor([[[1.0, 0.0], [0.0, NAN]]]), turn_weight=0.5, eps=0.0)
    s = math.sqrt(2)
    expected = torch.tensor([[[1 + s / 2, 1 - s / 4], [-1 - s / 4, -1.0]]])
    assert torch.allclose(adv, expected, atol=1e-5)


def test_mt_grpo_without_turn_rewards_is_grpo():
    adv = mt_grpo_advantages(torch.tensor([[1.0, 0.0]]), torch.full((1, 2, 3), NAN))
    assert torch.allclose(adv, torch.tensor([[[1.0] * 3, [-1.0] * 3]]), atol=1e-5)


def test_discounted_turn_returns_keep_padding():
    out = discounted_turn_returns(torch.tensor([[1.0, 0.0, 2.0], [1.0, NAN, NAN]]), gamma=0.5)
    assert torch.allclose(out[0], torch.tensor([1.5, 1.0, 2.0]))
    assert out[1, 0] == 1.0 and torch.isnan(out[1, 1:]).all()


def test_gigpo_normalises_within_equal_anchor_states_only():
    # anchor 0 at (g0,k0) and (g1,k0): returns 1 and 0 -> +0.5 / -0.5 (no std);
    # anchor 1 occurs once -> 0; anchor 2 has no return -> 0
    returns = torch.tensor([[[1.0, 1.0], [0.0, NAN]]])
    anchors = torch.tensor([[[0, 1], [0, 2]]])
    adv = gigpo_step_advantages(returns, anchors, std_normalize=False)
    assert torch.allclose(adv, torch.tensor([[[0.5, 0.0], [-0.5, 0.0]]]))


def test_gigpo_adds_the_episode_advantage():
    returns = torch.tensor([[[1.0], [0.0]]])
    anchors = torch.tensor([[[0], [0]]])
    adv = gigpo_advantages(torch.tensor([[1.0, 0.0]]), returns, anchors, step_weight=2.0,
                           std_normalize=False)
    assert torch.allclose(adv, torch.tensor([[[0.5 + 1.0], [-0.5 - 1.0]]]))

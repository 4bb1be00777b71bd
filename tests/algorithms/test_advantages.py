import math

import torch

from tracerl.algorithms.advantages import broadcast_to_tokens, grpo_advantages


def test_grpo_normalises_by_population_std():
    # group [1, 0, 0, 1]: mean 0.5, population std 0.5 -> advantages +-1
    adv = grpo_advantages(torch.tensor([[1.0, 0.0, 0.0, 1.0]]), eps=0.0)
    assert torch.allclose(adv, torch.tensor([[1.0, -1.0, -1.0, 1.0]]))


def test_grpo_hand_computed_uneven_group():
    # [1, 0, 0]: mean 1/3; deviations 2/3, -1/3, -1/3; var = (4/9+1/9+1/9)/3 = 2/9
    adv = grpo_advantages(torch.tensor([[1.0, 0.0, 0.0]]), eps=0.0)
    std = math.sqrt(2 / 9)
    expected = torch.tensor([[2 / 3 / std, -1 / 3 / std, -1 / 3 / std]])
    assert torch.allclose(adv, expected, atol=1e-6)


def test_dr_grpo_keeps_the_scale():
    adv = grpo_advantages(torch.tensor([[3.0, 1.0], [2.0, 2.0]]), std_normalize=False)
    assert torch.allclose(adv, torch.tensor([[1.0, -1.0], [0.0, 0.0]]))


def test_equal_rewards_give_zero_advantage_not_nan():
    adv = grpo_advantages(torch.tensor([[1.0, 1.0, 1.0]]))
    assert torch.equal(adv, torch.zeros(1, 3))


def test_unjudged_rewards_are_left_out_of_the_baseline():
    # NaN (None) excluded: baseline of [1, 0] is 0.5; the NaN sample gets 0
    adv = grpo_advantages(torch.tensor([[1.0, math.nan, 0.0]]), std_normalize=False)
    assert torch.allclose(adv, torch.tensor([[0.5, 0.0, -0.5]]))


def test_broadcast_puts_advantage_on_action_tokens_only():
    out = broadcast_to_tokens(torch.tensor([2.0, -1.0]), torch.tensor([[1, 0, 1], [0, 1, 1]]))
    assert torch.equal(out, torch.tensor([[2.0, 0.0, 2.0], [0.0, -1.0, -1.0]]))

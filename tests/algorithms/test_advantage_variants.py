import math

import pytest
import torch

from tracerl.algorithms.advantages import (
    discounted_returns,
    outcome_token_rewards,
    reinforce_pp_advantages,
    rloo_advantages,
)


def test_rloo_uses_the_mean_of_the_others():
    # [1, 0, 0, 1]: a 1 sees baseline (0+0+1)/3, a 0 sees (1+0+1)/3
    adv = rloo_advantages(torch.tensor([[1.0, 0.0, 0.0, 1.0]]))
    assert torch.allclose(adv, torch.tensor([[2 / 3, -2 / 3, -2 / 3, 2 / 3]]))


def test_rloo_leaves_unjudged_out_and_zeroes_lonely_samples():
    adv = rloo_advantages(torch.tensor([[1.0, math.nan, 0.0], [5.0, math.nan, math.nan]]))
    assert torch.allclose(adv, torch.tensor([[1.0, 0.0, -1.0], [0.0, 0.0, 0.0]]))


def test_discounted_returns_skip_observation_tokens():
    # t=2: 1; t=1 masked (no discount step); t=0: 0.5 * 1
    out = discounted_returns(torch.tensor([[0.0, 0.0, 1.0]]), torch.tensor([[1, 0, 1]]), 0.5)
    assert torch.allclose(out, torch.tensor([[0.5, 0.0, 1.0]]))


def test_reinforce_pp_whitens_returns_over_the_batch():
    # returns [[1, 1], [0, 0]]: mean 0.5, population std 0.5
    adv = reinforce_pp_advantages(torch.tensor([[0.0, 1.0], [0.0, 0.0]]), torch.ones(2, 2))
    assert torch.allclose(adv, torch.tensor([[1.0, 1.0], [-1.0, -1.0]]), atol=1e-5)


def test_reinforce_pp_ignores_masked_tokens_in_the_statistics():
    rewards = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 0]])
    adv = reinforce_pp_advantages(rewards, mask)
    assert adv[:, 2].abs().sum() == 0
    assert adv[0, 0].item() == pytest.approx(1.0, abs=1e-5)


def test_outcome_lands_on_the_last_action_token():
    out = outcome_token_rewards(torch.tensor([2.0, 3.0]), torch.tensor([[1, 1, 0], [0, 1, 0]]))
    assert torch.equal(out, torch.tensor([[0.0, 2.0, 0.0], [0.0, 3.0, 0.0]]))

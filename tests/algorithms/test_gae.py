import torch

from tracerl.algorithms.gae import bilevel_gae_advantages, gae_advantages


def test_gae_hand_computed_with_an_observation_gap():
    # t=2: delta = 1 - 0.8 = 0.2; t=1 is an observation; t=0: delta = 0.8 - 0.5 = 0.3,
    # A = 0.3 + 1 * 0.5 * 0.2 = 0.4
    adv, ret = gae_advantages(torch.tensor([[0.0, 0.0, 1.0]]), torch.tensor([[0.5, 9.0, 0.8]]),
                              torch.tensor([[1, 0, 1]]), gamma=1.0, lam=0.5)
    assert torch.allclose(adv, torch.tensor([[0.4, 0.0, 0.2]]))
    assert torch.allclose(ret, torch.tensor([[0.9, 0.0, 1.0]]))


def _reference_gae(rewards, values, mask, gamma, lam):
    """Plain loop over one row's action tokens (the textbook recursion)."""
    steps = [t for t in range(len(mask)) if mask[t]]
    adv = [0.0] * len(mask)
    running = 0.0
    for i in reversed(range(len(steps))):
        t = steps[i]
        nxt = values[steps[i + 1]] if i + 1 < len(steps) else 0.0
        delta = rewards[t] + gamma * nxt - values[t]
        running = delta + gamma * lam * running
        adv[t] = running
    return adv


def test_vectorised_gae_matches_the_reference_loop():
    g = torch.Generator().manual_seed(0)
    rewards = torch.randn(6, 17, generator=g)
    values = torch.randn(6, 17, generator=g)
    mask = (torch.rand(6, 17, generator=g) > 0.3).long()
    adv, _ = gae_advantages(rewards, values, mask, gamma=0.9, lam=0.8)
    expected = torch.tensor([_reference_gae(rewards[i].tolist(), values[i].tolist(),
                                            mask[i].tolist(), 0.9, 0.8) for i in range(6)])
    assert torch.allclose(adv, expected, atol=1e-5)


def test_bilevel_gae_hand_computed():
    # turn 0 = tokens 0,1 (reward 0.2 at its end), token 2 observation, turn 1 = 3,4 (1.0).
    # turn 1: A = 1 - 0.6 = 0.4; token 3: 0.6 - 0.4 + 0.4 = 0.6
    # turn 0: A = 0.2 + 0.6 - 0.3 + 0.4 = 0.9; token 0: 0.3 - 0.1 + 0.9 = 1.1
    adv, ret = bilevel_gae_advantages(
        turn_rewards=torch.tensor([[0.0, 0.2, 0.0, 0.0, 1.0]]),
        values=torch.tensor([[0.1, 0.3, 7.0, 0.4, 0.6]]),
        mask=torch.tensor([[1, 1, 0, 1, 1]]), turn_end=torch.tensor([[0, 1, 0, 0, 1]]),
        gamma=1.0, lam=1.0)
    assert torch.allclose(adv, torch.tensor([[1.1, 0.9, 0.0, 0.6, 0.4]]))
    assert torch.allclose(ret, torch.tensor([[1.2, 1.2, 0.0, 1.0, 1.0]]))


def test_bilevel_gae_with_one_token_turns_is_token_gae():
    # every action token ends its turn: the high level is then plain GAE
    rewards = torch.tensor([[0.0, 0.5, 0.0, 1.0]])
    values = torch.tensor([[0.2, 0.4, 3.0, 0.1]])
    mask = torch.tensor([[1, 1, 0, 1]])
    a, _ = bilevel_gae_advantages(rewards, values, mask, mask, gamma=0.9, lam=0.7)
    b, _ = gae_advantages(rewards, values, mask, gamma=0.9, lam=0.7)
    assert torch.allclose(a, b)

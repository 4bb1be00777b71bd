import typing

import pytest
import torch

from tracerl.algorithms.names import PolicyLoss
from tracerl.train.config import RLConfig
from tracerl.train.methods import POLICY_LOSSES, policy_loss
from tracerl.train.ppo import ppo_update
from tracerl.train.sampling import informative
from tracerl.types import Group, Message, Task, Trajectory

TASK = Task("t", (Message("user", "q"),))


def _group(*rewards: float | None) -> Group:
    return Group(TASK, [Trajectory(TASK, [0], outcome_reward=r) for r in rewards])


def test_only_groups_with_different_judged_rewards_are_informative():
    assert informative(_group(1.0, 0.0))
    assert not informative(_group(1.0, 1.0, None))
    assert not informative(_group(None, None))


def test_every_configurable_policy_loss_is_one_record_of_the_table():
    assert set(typing.get_args(PolicyLoss)) == set(POLICY_LOSSES)
    for name in typing.get_args(PolicyLoss):
        loss, _ = policy_loss(RLConfig(policy_loss=name))(
            torch.zeros(1, 2), torch.zeros(1, 2), torch.ones(1, 2), torch.ones(1, 2),
            clip_low=0.2, clip_high=0.2, agg="token-mean", weights=None)
        assert torch.isfinite(loss)


def test_truncated_is_uses_the_trainers_logprobs_and_reports_the_weight(tiny_policy):
    from tracerl.train.batch import TokenBatch

    model = tiny_policy.model
    ids = torch.randint(4, 90, (2, 6))
    batch = TokenBatch(ids, torch.ones(2, 6, dtype=torch.long), torch.ones(2, 5),
                       torch.full((2, 5), -50.0), torch.zeros(2, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    m = ppo_update(model, opt, batch, RLConfig(tis_cap=2.0), torch.Generator(), 0)
    # sampler logprobs of -50 make p_trainer / p_sampler huge: every weight is the cap
    assert m.tis_weight == 2.0
    assert m.clip_fraction == 0.0  # the ratio's denominator is the trainer's own logprob


@pytest.mark.parametrize("micro_tokens", [0, 8])
def test_one_pass_proximal_logprobs_give_the_two_pass_update(tiny_policy, monkeypatch,
                                                             micro_tokens):
    """One epoch of one minibatch: the training pass's own logprobs are the proximal
    policy's, so skipping the no-grad pass changes neither the weights nor the stats."""
    import copy

    import tracerl.train.ppo as ppo
    from tracerl.train.batch import TokenBatch

    ids = torch.randint(4, 90, (3, 7), generator=torch.Generator().manual_seed(0))
    behaviour = -torch.rand(3, 6, generator=torch.Generator().manual_seed(1)) * 12
    batch = TokenBatch(ids, torch.ones(3, 7, dtype=torch.long), torch.ones(3, 6), behaviour,
                       torch.tensor([[1.0] * 6, [-1.0] * 6, [0.5] * 6]))
    cfg = RLConfig(tis_cap=2.0, tis_level="token")
    assert ppo.proximal_in_pass(tiny_policy.model, cfg)
    results = []
    for in_pass in (True, False):
        model = copy.deepcopy(tiny_policy.model)
        monkeypatch.setattr(ppo, "proximal_in_pass", lambda m, c, v=in_pass: v)
        m = ppo_update(model, torch.optim.SGD(model.parameters(), lr=0.1), batch, cfg,
                       torch.Generator().manual_seed(0), 0, micro_tokens=micro_tokens)
        results.append((m, [p.detach().clone() for p in model.parameters()]))
    (one, w1), (two, w2) = results
    assert 0 < one.tis_clip_fraction < 1  # some weights at the cap, some under it
    assert one.tis_weight == pytest.approx(two.tis_weight)
    assert one.tis_clip_fraction == pytest.approx(two.tis_clip_fraction)
    assert one.loss == pytest.approx(two.loss)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(w1, w2, strict=True))
    assert not ppo.proximal_in_pass(tiny_policy.model, RLConfig(tis_cap=2.0, update_epochs=2))

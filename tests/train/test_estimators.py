import typing

import torch

from tracerl.algorithms.names import Advantage
from tracerl.train.batch import TokenBatch
from tracerl.train.config import RLConfig
from tracerl.train.estimators import CreditInputs
from tracerl.train.methods import ESTIMATORS

# two groups of two one-turn trajectories; columns: 3 action tokens then padding
MASK = torch.tensor([[1.0, 1.0, 1.0, 0.0]] * 4)
TURNS = torch.tensor([[0, 0, 0, -1]] * 4)


def _inputs(rewards, **kw) -> CreditInputs:
    n, t = MASK.shape
    batch = TokenBatch(torch.zeros(n, t + 1, dtype=torch.long),
                       torch.ones(n, t + 1, dtype=torch.long), MASK, torch.zeros(n, t),
                       torch.zeros(n, t))
    return CreditInputs(batch, torch.tensor(rewards), torch.tensor([0, 0, 1, 1]), TURNS, **kw)


def test_every_configurable_estimator_is_one_record_of_the_table():
    assert set(typing.get_args(Advantage)) == set(ESTIMATORS)


def test_the_table_says_what_each_estimator_needs():
    assert {n for n, s in ESTIMATORS.items() if s.critic} == {"gae", "turn_gae"}
    assert {n for n, s in ESTIMATORS.items() if s.group_baseline} == {"grpo", "dr_grpo", "rloo"}
    assert {n for n, s in ESTIMATORS.items() if s.anchors} == {"gigpo"}
    assert ESTIMATORS["mt_grpo"].needs_evaluator and ESTIMATORS["mt_grpo"].turn_rewards


def test_grpo_broadcasts_group_advantages_on_action_tokens():
    out = ESTIMATORS["grpo"].fn(_inputs([1.0, 0.0, 1.0, 1.0]), RLConfig())
    assert torch.allclose(out.advantages[:, 0], torch.tensor([1.0, -1.0, 0.0, 0.0]), atol=1e-5)
    assert out.advantages[:, 3].abs().sum() == 0


def test_rloo_and_dr_grpo_keep_the_reward_scale():
    inp = _inputs([3.0, 1.0, 2.0, 2.0])
    assert torch.allclose(ESTIMATORS["dr_grpo"].fn(inp, RLConfig()).advantages[:, 0],
                          torch.tensor([1.0, -1.0, 0.0, 0.0]))
    assert torch.allclose(ESTIMATORS["rloo"].fn(inp, RLConfig()).advantages[:, 0],
                          torch.tensor([2.0, -2.0, 0.0, 0.0]))


def test_reinforce_pp_baseline_subtracts_the_group_mean_then_whitens():
    # group means 0.5 and 1 -> [0.5, -0.5, 0, 0], whitened over all 12 action tokens
    out = ESTIMATORS["reinforce_pp_baseline"].fn(_inputs([1.0, 0.0, 1.0, 1.0]), RLConfig())
    std = (0.5 ** 2 / 2) ** 0.5
    assert torch.allclose(out.advantages[:, 0], torch.tensor([0.5, -0.5, 0.0, 0.0]) / std,
                          atol=1e-4)


def test_mt_grpo_without_a_trusted_evaluator_equals_grpo():
    inp = _inputs([1.0, 0.0, 1.0, 1.0])
    a = ESTIMATORS["mt_grpo"].fn(inp, RLConfig()).advantages
    b = ESTIMATORS["grpo"].fn(inp, RLConfig()).advantages
    assert torch.allclose(a, b)


def test_gae_returns_value_targets():
    values = torch.full(MASK.shape, 0.25) * MASK
    out = ESTIMATORS["gae"].fn(_inputs([1.0, 0.0, 1.0, 1.0], values=values),
                            RLConfig(gamma=1.0, lam=1.0))
    # lam = 1: the return is the outcome on every action token
    assert torch.allclose(out.returns[:, 0], torch.tensor([1.0, 0.0, 1.0, 1.0]))
    assert torch.allclose(out.advantages[:, 0], torch.tensor([0.75, -0.25, 0.75, 0.75]))


def test_kl_in_the_reward_lowers_group_rewards():
    kl = torch.tensor([[0.2, 0.2, 0.2, 5.0]] * 4)
    inp = _inputs([1.0, 1.0, 0.0, 0.0], kl=kl * torch.tensor([[1.0], [0.0], [0.0], [0.0]]))
    out = ESTIMATORS["dr_grpo"].fn(inp, RLConfig(kl_coef=0.5, kl_placement="reward"))
    # sequence 0 pays 0.5 * 0.6 = 0.3 (padding KL is masked): [0.7, 1] -> [-0.15, +0.15]
    assert torch.allclose(out.advantages[:2, 0], torch.tensor([-0.15, 0.15]), atol=1e-5)

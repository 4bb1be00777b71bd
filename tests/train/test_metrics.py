"""The step's rollout summary: entropy per sampled token over the whole batch."""

import pytest

from tracerl.rollout.runner import ENTROPY_SUM
from tracerl.train.metrics import RolloutSummary
from tracerl.types import Task, Trajectory, Turn


def _traj(tokens_per_turn, entropy_sum=None):
    t = Trajectory(task=Task(id="t", messages=()), prompt_ids=[1, 2])
    t.turns = [Turn(action_ids=list(range(n)), action_logprobs=[0.0] * n, action_text="")
               for n in tokens_per_turn]
    if entropy_sum is not None:
        t.metrics[ENTROPY_SUM] = entropy_sum
    return t


def test_entropy_is_per_sampled_token_and_absent_when_unreported():
    summary = RolloutSummary.of([_traj([3, 1], 2.0), _traj([4], 6.0), _traj([5])])
    assert summary.entropy == pytest.approx((2.0 + 6.0) / (4 + 4))
    assert RolloutSummary.of([_traj([2])]).entropy is None

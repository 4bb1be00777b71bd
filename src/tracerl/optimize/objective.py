"""Objectives a search maximizes: any Reward, or an evaluate() Metric as a Reward.

`tracerl.evals.as_reward(metric)` makes a Metric an outcome Reward (trajectory match,
tool-call validity, exact match, ...). `PerTurnMean` scores a per-turn metric: the
metric on each prefix of the trajectory (turn i on turns[: i + 1]), averaged, so a
prompt that keeps every turn valid beats one that recovers at the end.
"""

from __future__ import annotations

from tracerl.evals.metric import Metric, MetricReward
from tracerl.types import Trajectory


class PerTurnMean:
    """The mean over turns of a Metric scored on each turn's prefix (None: no turn judged)."""

    def __init__(self, metric: Metric) -> None:
        self.inner = MetricReward(metric)
        self.name = f"per_turn/{metric.name}"

    def __call__(self, trajectory: Trajectory) -> float | None:
        scores = [s for s in self.inner.per_turn(trajectory) if s is not None]
        return sum(scores) / len(scores) if scores else None

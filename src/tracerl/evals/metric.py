"""The Metric protocol, its result, and the adapter that makes any Metric a Reward.

A Metric maps an EvalItem to a score. It may return a MetricResult, a float, a bool or
None (None = not applicable or could not be judged, never "wrong"), or raise
`Unjudged` when the item's data cannot judge it (fault.py: who is at fault decides the
score); `score()` turns that into a None score with the reason. `MetricReward`
turns a Metric into a `tracerl.rewards.Reward` (`name`, `(trajectory) -> float|None`)
so evals and training share one definition of "good".
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from tracerl.evals.fault import Unjudged
from tracerl.evals.items import EvalItem, item_from_trajectory
from tracerl.types import Trajectory

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MetricResult:
    score: float | None
    """The metric's value; None when it does not apply or could not be judged."""
    passed: bool | None = None
    details: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class Metric(Protocol):
    """`(item) -> MetricResult | float | bool | None`; `name` labels its results."""

    @property
    def name(self) -> str: ...

    def __call__(self, item: EvalItem) -> MetricResult | float | bool | None: ...


def to_result(value: MetricResult | float | bool | None, metric_name: str) -> MetricResult:
    """Normalise what a metric returned; a non-number is an error naming the metric."""
    if isinstance(value, MetricResult):
        return value
    if value is None:
        return MetricResult(None)
    if isinstance(value, bool):
        return MetricResult(1.0 if value else 0.0, passed=value)
    if isinstance(value, (int, float)) and not math.isnan(float(value)):
        return MetricResult(float(value))
    raise TypeError(f"metric {metric_name!r} returned {value!r}; "
                    "expected MetricResult, float, bool or None")


UNJUDGED = "unjudged"
"""The details key holding why a None score could not be judged."""


def unjudged(reason: str, **details: Any) -> MetricResult:
    """A None score that says why (counted by reason in evaluate()'s report)."""
    return MetricResult(None, details={UNJUDGED: reason, **details})


def score(metric: Metric, item: EvalItem) -> MetricResult:
    """The metric's result on `item`; `Unjudged` becomes a None score with its reason."""
    try:
        return to_result(metric(item), metric.name)
    except Unjudged as exc:
        return unjudged(exc.reason)


class MetricReward:
    """A Metric used as an outcome Reward, or per turn via `per_turn`.

    A metric that raises gives None (the sample is masked, as for any reward that
    could not judge) and is counted in `failures` and logged, never silent; an item its
    data cannot judge (`Unjudged`) gives None too, counted in `unjudged`. Malformed
    policy output is never None: the catalogue's metrics score it as wrong.
    """

    def __init__(self, metric: Metric, name: str | None = None):
        self.metric = metric
        self.name = name or metric.name
        self.failures = 0
        self.unjudged = 0

    def _score(self, traj: Trajectory) -> float | None:
        try:
            result = score(self.metric, item_from_trajectory(traj))
        except Exception:  # noqa: BLE001 - contained and counted, see class doc
            self.failures += 1
            log.exception("metric %r failed on task %r", self.name, traj.task.id)
            return None
        if result.score is None:
            self.unjudged += 1
        return result.score

    def __call__(self, trajectory: Trajectory) -> float | None:
        return self._score(trajectory)

    def per_turn(self, trajectory: Trajectory) -> list[float | None]:
        """The metric on each prefix of the trajectory: turn i scored on turns[: i + 1]."""
        return [self._score(replace(trajectory, turns=trajectory.turns[: i + 1]))
                for i in range(len(trajectory.turns))]


def as_reward(metric: Metric, name: str | None = None) -> MetricReward:
    return MetricReward(metric, name)

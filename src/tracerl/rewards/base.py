"""The Reward protocol and the result every verifiable check returns.

A Reward maps a finished Trajectory to `float | None`. None means "could not be
judged" (sandbox down, judge timed out): the sample is masked out of the loss and
counted, never scored as 0 (an infrastructure error is not a wrong answer).

A reward that is not a finite number of sane size (`reward_fault`) is a data fault, not
a score: wherever rewards enter (the rollout runner, `tracerl serve`'s reward route and
reward function, the RL step itself) it is treated as unjudged and counted. The bound
`MAX_ABS_REWARD` exists because one huge finite reward poisons the update as surely as
NaN: group baselines square deviations in float32 (max 3.4e38), so 1e160 becomes inf,
then NaN advantages, then NaN weights (issue 32).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tracerl.types import Trajectory


@dataclass(frozen=True)
class RewardResult:
    """The verdict of one verifiable check."""

    score: float | None
    """In [0, 1] for checks; None when the check itself failed (infrastructure)."""
    status: str = "ok"
    """Why: "ok", "wrong", "no_answer", "timeout", "infra_error", ..."""
    passed: int = 0
    total: int = 0
    details: dict[str, Any] = field(default_factory=dict)

    def __float__(self) -> float:
        if self.score is None:
            raise ValueError(f"reward could not be judged (status={self.status!r})")
        return float(self.score)


MAX_ABS_REWARD = 1e6
"""Largest |reward| trained on. Verifiable rewards live in [0, 1] and shaped ones in
tens; 1e6 leaves room for any sane scale while its square (1e12, summed over a batch)
stays far inside float32, so a group's std and the advantages cannot overflow."""


def reward_fault(value: object) -> str | None:
    """Why `value` cannot be trained on as a reward, or None when it can (None itself,
    "unjudged", is not a fault). Rejects non-numbers, NaN, +-inf and |value| >
    MAX_ABS_REWARD."""
    if value is None:
        return None
    if isinstance(value, str | bytes):
        return f"not a number ({type(value).__name__})"
    try:
        x = float(value)  # type: ignore[arg-type]
    except OverflowError:
        return "too large for a float"
    except (TypeError, ValueError):
        return f"not a number ({type(value).__name__})"
    if not math.isfinite(x):
        return f"not finite ({x})"
    if abs(x) > MAX_ABS_REWARD:
        return f"|reward| {abs(x):.3g} exceeds {MAX_ABS_REWARD:.0e} (a data fault, not a score)"
    return None


@runtime_checkable
class Reward(Protocol):
    """`(trajectory) -> float | None`; a `name` labels its traces and metrics."""

    name: str

    def __call__(self, trajectory: Trajectory) -> float | None: ...


@runtime_checkable
class BatchReward(Reward, Protocol):
    """A Reward that can also score many trajectories at once, cheaper than one by one
    (one sandboxed session for a whole rollout batch, as MathAnswerReward does).

    `batch(ts)[i]` must equal `reward(ts[i])`. The rollout runner calls `batch` once per
    rollout batch when a Reward offers it; if `batch` raises, it scores the trajectories
    one by one instead, so a failure stays contained to the trajectory that caused it.
    """

    def batch(self, trajectories: Sequence[Trajectory]) -> list[float | None]: ...

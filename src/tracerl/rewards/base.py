"""The Reward protocol and the result every verifiable check returns.

A Reward maps a finished Trajectory to `float | None`. None means "could not be
judged" (sandbox down, judge timed out): the sample is masked out of the loss and
counted, never scored as 0 (an infrastructure error is not a wrong answer).
"""

from __future__ import annotations

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

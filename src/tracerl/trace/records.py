"""Records that tracing accepts from other parts of the loop.

A GUARDRAIL span is one Guard decision (tracerl.guard.GuardDecision, the layer below)
placed in its trajectory; any other guard is traced by building a GuardDecision. Extra
evaluators are written elsewhere and hand tracing a plain EvaluationRecord.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tracerl.guard.decision import GuardDecision
from tracerl.types import Trajectory


@dataclass(frozen=True)
class GuardrailRecord:
    """One Guard decision with where and when it happened in a trajectory."""

    decision: GuardDecision
    """What was checked, what was found, what was done (no matched text is kept)."""
    turn_index: int | None = None
    """The turn whose tool call or tool output was checked."""
    started_at: float = 0.0
    """Wall-clock start (time.time()); 0 = unknown (the span gets the trajectory's end)."""
    ended_at: float = 0.0
    """Wall-clock end (time.time()); 0 = unknown."""


@dataclass(frozen=True)
class EvaluationRecord:
    """An evaluator's verdict beyond the reward parts (a judge, an eval metric)."""

    name: str
    score: float | None
    label: str = ""
    explanation: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def guardrail_records(traj: Trajectory) -> list[GuardrailRecord]:
    """A GuardrailRecord for every Guard decision stored on a trajectory's tool results,
    timed by the tool call it guarded."""
    return [
        GuardrailRecord(d, i, result.started_at, result.ended_at)
        for i, turn in enumerate(traj.turns)
        for result in turn.tool_results
        for d in result.guard
    ]

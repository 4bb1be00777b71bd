"""Small records that tracing accepts from other parts of the loop.

The guard pipeline (tracerl.guard) and extra evaluators are written elsewhere; tracing
does not import them. It accepts these plain records instead, so any scanner or judge
can be traced by filling one in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tracerl.types import Trajectory

GUARD_ACTIONS = ("allow", "flag", "redact", "block")


@dataclass(frozen=True)
class GuardFinding:
    """One thing a scanner found (a secret, an injection attempt, ...)."""

    scanner: str
    category: str
    message: str = ""
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"scanner": self.scanner, "category": self.category,
                "message": self.message, "score": self.score}


@dataclass(frozen=True)
class GuardrailRecord:
    """One guard scan: which scanners ran on what, what they found, what was done."""

    scanners: tuple[str, ...]
    action: str
    """One of GUARD_ACTIONS: what the guard did with the scanned text."""
    findings: tuple[GuardFinding, ...] = ()
    turn_index: int | None = None
    """The turn whose action or observation was scanned; None for the task prompt."""
    target: str = "action"
    """What was scanned: "prompt", "action", "observation" or "tool_output"."""
    text: str = ""
    started_at: float = 0.0
    ended_at: float = 0.0

    def __post_init__(self) -> None:
        if self.action not in GUARD_ACTIONS:
            raise ValueError(
                f"GuardrailRecord.action must be one of {GUARD_ACTIONS}, got {self.action!r}"
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GuardrailRecord:
        """Build from a plain mapping, e.g. a guard result serialised to JSON."""
        findings = tuple(
            GuardFinding(
                scanner=str(f.get("scanner", "")),
                category=str(f.get("category", "")),
                message=str(f.get("message", "")),
                score=None if f.get("score") is None else float(f["score"]),
            )
            for f in data.get("findings", ())
        )
        return cls(
            scanners=tuple(str(s) for s in data.get("scanners", ())),
            action=str(data.get("action", "allow")),
            findings=findings,
            turn_index=data.get("turn_index"),
            target=str(data.get("target", "action")),
            text=str(data.get("text", "")),
            started_at=float(data.get("started_at", 0.0)),
            ended_at=float(data.get("ended_at", 0.0)),
        )


@dataclass(frozen=True)
class EvaluationRecord:
    """An evaluator's verdict beyond the reward parts (a judge, an eval metric)."""

    name: str
    score: float | None
    label: str = ""
    explanation: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def guardrail_records(traj: Trajectory) -> list[GuardrailRecord]:
    """GUARDRAIL records for every guard decision stored on a trajectory's tool results.

    Decisions are read by attribute (tracerl.guard.GuardDecision), so tracing does not
    import the guard package; a decision that did nothing ("off") is recorded as "allow".
    """
    out = []
    for i, turn in enumerate(traj.turns):
        for result in turn.tool_results:
            for d in result.guard:
                action = d.action.value if d.action.value in GUARD_ACTIONS else "allow"
                findings = tuple(GuardFinding(f.scanner, f.kind, f.location or "", f.score)
                                 for f in d.findings)
                target = "action" if d.target == "tool_call" else "tool_output"
                out.append(GuardrailRecord(tuple(d.scanners), action, findings, i, target,
                                           "", result.started_at, result.ended_at))
    return out

"""The Guard's verdict on one tool call or observation.

The trace layer (tracerl.trace.emit) turns each decision into one GUARDRAIL span. A
decision never holds the matched text of a finding (see `Finding`), so recording it in
a trace or metrics file cannot leak the secret it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tracerl.guard.config import Action
from tracerl.guard.findings import Finding

Target = Literal["tool_call", "observation", "prompt"]
"""What was scanned: a tool call's arguments, a tool's output (documents a tool retrieved
included), or a user message."""


@dataclass(frozen=True)
class GuardDecision:
    """What the Guard decided, why, and what it cost."""

    target: Target
    action: Action
    """The strongest action taken over all findings (OFF when nothing triggered)."""
    findings: tuple[Finding, ...]
    """Findings that met their rule's min_score, with `location` naming the field."""
    applied: tuple[Action, ...]
    """The action applied to each finding, aligned with `findings`."""
    reason: str
    """Readable explanation, safe to show the agent as an error observation."""
    penalty: float
    """How much the rollout may subtract from the reward (0 when nothing triggered)."""
    latency_s: float
    scanners: tuple[str, ...]
    """Scanners that ran."""
    errors: tuple[str, ...] = ()
    """`scanner: error` for each scanner that raised (contained, counted)."""
    tool_name: str | None = None
    arguments: dict[str, Any] | None = None
    """Tool-call arguments after redaction (equal to the input when nothing was redacted);
    blocked secrets and PII are hidden here too, so a recorded blocked call cannot leak them."""
    text: str | None = None
    """Observation text after redaction, or the withheld notice when blocked."""

    @property
    def blocked(self) -> bool:
        return self.action is Action.BLOCK

    @property
    def triggered(self) -> bool:
        return bool(self.findings) or bool(self.errors)


def describe(findings: tuple[Finding, ...], limit: int = 3) -> str:
    """`scanner/kind in location (score)` for the first few findings, strongest first."""
    top = sorted(findings, key=lambda f: -f.score)[:limit]
    parts = [
        f"{f.scanner}/{f.kind}" + (f" in {f.location}" if f.location else "") + f" ({f.score:.2f})"
        for f in top
    ]
    more = len(findings) - len(top)
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")

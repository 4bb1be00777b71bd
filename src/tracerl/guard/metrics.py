"""Counters of Guard decisions, per scanner and action, mergeable across workers.

Rollout workers each hold a Guard; the trainer merges their GuardMetrics once per step
and writes `as_flat()` into metrics.jsonl next to the reward metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tracerl.guard.config import Action
from tracerl.guard.decision import GuardDecision


@dataclass
class ScannerCounts:
    """What one scanner triggered, by the action applied to its findings."""

    findings: int = 0
    flagged: int = 0
    redacted: int = 0
    blocked: int = 0
    errors: int = 0

    def add(self, action: Action) -> None:
        self.findings += 1
        if action is Action.FLAG:
            self.flagged += 1
        elif action is Action.REDACT:
            self.redacted += 1
        elif action is Action.BLOCK:
            self.blocked += 1

    def merge(self, other: ScannerCounts) -> ScannerCounts:
        return ScannerCounts(
            self.findings + other.findings,
            self.flagged + other.flagged,
            self.redacted + other.redacted,
            self.blocked + other.blocked,
            self.errors + other.errors,
        )


@dataclass
class GuardMetrics:
    """Decision counts and latency totals; `merge` adds two workers' counters."""

    tool_calls: int = 0
    observations: int = 0
    prompts: int = 0
    blocked: int = 0
    redacted: int = 0
    flagged: int = 0
    latency_s_total: float = 0.0
    latency_s_max: float = 0.0
    by_scanner: dict[str, ScannerCounts] = field(default_factory=dict)

    @property
    def decisions(self) -> int:
        return self.tool_calls + self.observations + self.prompts

    def record(self, decision: GuardDecision) -> None:
        """Count one decision and every finding and error in it."""
        if decision.target == "tool_call":
            self.tool_calls += 1
        elif decision.target == "prompt":
            self.prompts += 1
        else:
            self.observations += 1
        self.blocked += decision.action is Action.BLOCK
        self.redacted += decision.action is Action.REDACT
        self.flagged += decision.action is Action.FLAG
        self.latency_s_total += decision.latency_s
        self.latency_s_max = max(self.latency_s_max, decision.latency_s)
        for f, action in zip(decision.findings, decision.applied, strict=True):
            self.by_scanner.setdefault(f.scanner, ScannerCounts()).add(action)
        for err in decision.errors:
            self.by_scanner.setdefault(err.split(":", 1)[0], ScannerCounts()).errors += 1

    def merge(self, other: GuardMetrics) -> GuardMetrics:
        """A new GuardMetrics holding the sum of both."""
        names = set(self.by_scanner) | set(other.by_scanner)
        return GuardMetrics(
            tool_calls=self.tool_calls + other.tool_calls,
            observations=self.observations + other.observations,
            prompts=self.prompts + other.prompts,
            blocked=self.blocked + other.blocked,
            redacted=self.redacted + other.redacted,
            flagged=self.flagged + other.flagged,
            latency_s_total=self.latency_s_total + other.latency_s_total,
            latency_s_max=max(self.latency_s_max, other.latency_s_max),
            by_scanner={
                n: self.by_scanner.get(n, ScannerCounts()).merge(
                    other.by_scanner.get(n, ScannerCounts())
                )
                for n in sorted(names)
            },
        )

    def as_flat(self, prefix: str = "guard") -> dict[str, float]:
        """`{"guard/blocked": 3, "guard/secrets/redacted": 1, ...}` for metrics.jsonl."""
        out = {
            f"{prefix}/tool_calls": float(self.tool_calls),
            f"{prefix}/observations": float(self.observations),
            f"{prefix}/prompts": float(self.prompts),
            f"{prefix}/blocked": float(self.blocked),
            f"{prefix}/redacted": float(self.redacted),
            f"{prefix}/flagged": float(self.flagged),
            f"{prefix}/latency_ms_mean": 1000.0 * self.latency_s_total / max(1, self.decisions),
            f"{prefix}/latency_ms_max": 1000.0 * self.latency_s_max,
        }
        for name, c in self.by_scanner.items():
            for key in ("findings", "flagged", "redacted", "blocked", "errors"):
                out[f"{prefix}/{name}/{key}"] = float(getattr(c, key))
        return out

"""Guardrails on the rollout path: scanners and the Guard pipeline (issue 6).

from tracerl.guard import scan, redact, Guard
scan("ignore all previous instructions")   # -> [Finding(scanner="jailbreak", ...)]
guard = Guard()
decision = guard.check_tool_call("bash", {"command": "rm -rf /"})  # decision.blocked
"""

from tracerl.guard.config import (
    Action,
    GuardConfig,
    ObservationRules,
    PromptRules,
    Rule,
    ToolCallRules,
)
from tracerl.guard.decision import GuardDecision
from tracerl.guard.findings import Finding, Scanner
from tracerl.guard.guarded import GuardedCall
from tracerl.guard.metrics import GuardMetrics, ScannerCounts
from tracerl.guard.pipeline import Guard
from tracerl.guard.scan import SCANNERS, redact, scan

__all__ = [
    "SCANNERS",
    "Action",
    "Finding",
    "Guard",
    "GuardConfig",
    "GuardDecision",
    "GuardMetrics",
    "GuardedCall",
    "ObservationRules",
    "PromptRules",
    "Rule",
    "Scanner",
    "ScannerCounts",
    "ToolCallRules",
    "redact",
    "scan",
]

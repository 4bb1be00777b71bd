"""The Guard: scanners plus per-scanner rules, applied on the rollout path.

The rollout runner (ToolEnv) calls `check_tool_call` before running a tool and
`check_observation` before the policy reads what came back, or simply wraps each tool
in `guarded_call`, which guarantees a blocked call never executes and turns the block
into an error observation the agent can read and learn from. Every decision is
counted in `metrics` and carries the attributes of a GUARDRAIL span.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tracerl.guard.config import Action, GuardConfig, Rule, rules_by_scanner
from tracerl.guard.decision import GuardDecision, Target, describe
from tracerl.guard.findings import Finding, Scanner
from tracerl.guard.guarded import GuardedCall, run_guarded, run_guarded_async
from tracerl.guard.metrics import GuardMetrics
from tracerl.guard.scan import SCANNERS, apply_redactions

_WITHHELD = "[{} withheld by guard: {}]"


@dataclasses.dataclass(frozen=True)
class _Scanned:
    """Findings over one text, each with the action its rule applies."""

    findings: list[Finding]
    actions: list[Action]
    errors: list[str]
    error_action: Action


class Guard:
    """Runs the configured scanners on tool calls and observations and decides."""

    def __init__(
        self, config: GuardConfig | None = None, scanners: Mapping[str, Scanner] | None = None
    ) -> None:
        self.config = config or GuardConfig()
        # A custom scanner replaces the built-in one of its name; its rules are that
        # scanner's rules in the config (guard.tool_call.<name>, guard.observation.<name>).
        unknown = sorted(set(scanners or {}) - set(SCANNERS))
        if unknown:
            raise ValueError(
                f"custom scanners {unknown} replace no built-in scanner; a custom scanner "
                f"takes the name (and the rules) of one of {sorted(SCANNERS)}"
            )
        self.scanners: dict[str, Scanner] = {**SCANNERS, **(scanners or {})}
        on = self.config.enabled  # disabled: no rules, so no scanner runs
        self._rules: dict[Target, dict[str, Rule]] = {
            "tool_call": rules_by_scanner(self.config.tool_call) if on else {},
            "observation": rules_by_scanner(self.config.observation) if on else {},
            "prompt": rules_by_scanner(self.config.prompt) if on else {},
        }
        self._metrics = GuardMetrics()
        self._lock = threading.Lock()

    @property
    def metrics(self) -> GuardMetrics:
        """A snapshot of the counters so far."""
        with self._lock:
            return GuardMetrics().merge(self._metrics)

    def reset_metrics(self) -> GuardMetrics:
        """Return the counters so far and start new ones (call once per training step)."""
        with self._lock:
            out, self._metrics = self._metrics, GuardMetrics()
        return out

    def check_tool_call(self, name: str, arguments: Mapping[str, Any]) -> GuardDecision:
        """Scan every string (and number) in `arguments`; block, redact or flag per rule."""
        if not isinstance(arguments, Mapping):
            raise TypeError(
                f"tool call arguments must be a mapping, got {type(arguments).__name__}"
            )
        t0 = time.perf_counter()
        rules = self._rules["tool_call"]
        fields = list(argument_leaves(arguments, "arguments"))
        scanned = [(path, value, self._scan(value, rules, path)) for path, value in fields]
        redacted = {}
        for path, value, s in scanned:
            spans = [f for f, a in zip(s.findings, s.actions, strict=True) if _hides(f, a)]
            if spans:
                redacted[path] = apply_redactions(value, spans)
        new_args = _rebuild(arguments, "arguments", redacted) if redacted else dict(arguments)
        return self._decide("tool_call", [s for _, _, s in scanned], t0, tool_name=name,
                            arguments=new_args)  # fmt: skip

    def check_observation(self, text: str) -> GuardDecision:
        """Scan an observation (a tool's output, documents it retrieved included); redact
        spans or withhold the whole text per rule."""
        return self._check_text("observation", text)

    def check_prompt(self, text: str) -> GuardDecision:
        """Scan a user message with the `prompt` rules (jailbreaks are typed here, so the
        detector's weaker scores count: config.PROMPT_MIN_SCORE)."""
        return self._check_text("prompt", text)

    def _check_text(self, target: Target, text: str) -> GuardDecision:
        if not isinstance(text, str):
            raise TypeError(f"{target} text must be str, got {type(text).__name__}")
        t0 = time.perf_counter()
        s = self._scan(text, self._rules[target], "")
        to_redact = [f for f, a in zip(s.findings, s.actions, strict=True) if a is Action.REDACT]
        decision = self._decide(target, [s], t0, text=apply_redactions(text, to_redact))
        if decision.blocked:
            decision = dataclasses.replace(
                decision, text=_WITHHELD.format(_NOUN[target], describe(decision.findings))
            )
        return decision

    def _scan(self, text: str, rules: Mapping[str, Rule], location: str) -> _Scanned:
        findings: list[Finding] = []
        actions: list[Action] = []
        errors: list[str] = []
        error_action = Action.OFF
        for name, rule in rules.items():
            action = Action(rule.action)
            if action is Action.OFF:
                continue
            try:
                found = self.scanners[name].scan(text)
            except Exception as exc:  # contained: one broken scanner never crashes a rollout
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
                fail = action if self.config.fail_closed else Action.FLAG
                error_action = max(error_action, fail, key=lambda a: a.severity)
                continue
            for f in found:
                if f.score >= rule.min_score:
                    findings.append(dataclasses.replace(f, location=location) if location else f)
                    actions.append(action)
        return _Scanned(findings, actions, errors, error_action)

    def _active(self, target: Target) -> tuple[str, ...]:
        return tuple(n for n, r in self._rules[target].items() if r.action != Action.OFF)

    def guarded_call(
        self, fn: Callable[..., Any], name: str, arguments: Mapping[str, Any], call_id: str = ""
    ) -> GuardedCall:
        """Check, run `fn(**arguments)` only if not blocked, then check its output."""
        return run_guarded(self, fn, name, arguments, call_id)

    async def guarded_call_async(
        self, fn: Callable[..., Any], name: str, arguments: Mapping[str, Any], call_id: str = ""
    ) -> GuardedCall:
        """As `guarded_call`, awaiting `fn` when it is a coroutine function."""
        return await run_guarded_async(self, fn, name, arguments, call_id)

    def _decide(
        self, target: Target, parts: list[_Scanned], t0: float, **extra: Any
    ) -> GuardDecision:
        findings = tuple(f for p in parts for f in p.findings)
        applied = tuple(a for p in parts for a in p.actions)
        errors = tuple(e for p in parts for e in p.errors)
        strongest = [*applied, *(p.error_action for p in parts if p.errors)]
        action = max(strongest, key=lambda a: a.severity, default=Action.OFF)
        penalty = (
            self.config.block_penalty
            if action is Action.BLOCK
            else (self.config.flag_penalty if action is not Action.OFF else 0.0)
        )
        decision = GuardDecision(
            target=target, action=action, findings=findings, applied=applied,
            reason=_reason(target, action, findings, errors, extra.get("tool_name")),
            penalty=penalty, latency_s=time.perf_counter() - t0,
            scanners=self._active(target),
            errors=errors, **extra,
        )  # fmt: skip
        with self._lock:
            self._metrics.record(decision)
        return decision


_SENSITIVE = frozenset({"secrets", "pii"})


def _hides(f: Finding, action: Action) -> bool:
    """Whether the recorded arguments hide this span: redacted ones, and blocked secrets
    and PII too, so that the blocked call kept in traces cannot leak what it blocked."""
    return action is Action.REDACT or (action is Action.BLOCK and f.scanner in _SENSITIVE)


def _reason(
    target: Target, action: Action, findings: tuple[Finding, ...], errors: tuple[str, ...],
    tool_name: str | None,
) -> str:  # fmt: skip
    """The sentence the agent reads; names what was found, never the sensitive text."""
    if action is Action.OFF:
        return "no guard findings"
    what = describe(findings) if findings else "a guard scanner failed (" + "; ".join(errors) + ")"
    if target == "tool_call":
        subject = f"tool call {tool_name!r}"
        if action is Action.BLOCK:
            return (
                f"Blocked by guard: {subject} was not executed because of {what}. "
                "Rewrite the call without it."
            )
        return f"Guard {_PAST[action]} {subject}: {what}."
    if action is Action.BLOCK:
        return f"Blocked by guard: the {_NOUN[target]} was withheld because of {what}."
    return f"Guard {_PAST[action]} the {_NOUN[target]}: {what}."


def argument_leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(path, text) for every string and number inside nested dicts and lists."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield path, str(value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from argument_leaves(v, f"{path}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from argument_leaves(v, f"{path}[{i}]")


def _rebuild(value: Any, path: str, redacted: Mapping[str, str]) -> Any:
    """A copy of `value` with the string leaves at `redacted`'s paths replaced."""
    if path in redacted:
        return redacted[path]
    if isinstance(value, Mapping):
        return {k: _rebuild(v, f"{path}.{k}", redacted) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_rebuild(v, f"{path}[{i}]", redacted) for i, v in enumerate(value))
    return value


_NOUN = {"observation": "observation", "prompt": "user message", "tool_call": "tool call"}
_PAST = {Action.OFF: "passed", Action.FLAG: "flagged", Action.REDACT: "redacted",
         Action.BLOCK: "blocked"}

"""Running a tool behind the Guard: a blocked call never executes, and the agent sees why.

`run_guarded` is what ToolEnv wraps around every tool: check the call, run the tool
with the (possibly redacted) arguments only when not blocked, check the output as an
observation, and return a `ToolResult` whose content is what the policy will read.
A tool that raises is contained into a `tool_raised` result, never a crashed rollout.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from tracerl.guard.decision import GuardDecision
from tracerl.types import ToolCall, ToolResult


class GuardChecks(Protocol):
    """What running a tool needs of the Guard (tracerl.guard.pipeline.Guard): its two
    checks. A protocol here rather than an import, so the pipeline, which calls this
    module, and this module do not import each other."""

    def check_tool_call(self, name: str, arguments: Mapping[str, Any]) -> GuardDecision: ...

    def check_observation(self, text: str) -> GuardDecision: ...


@dataclass(frozen=True)
class GuardedCall:
    """The tool result the policy sees, and the Guard decisions that shaped it."""

    result: ToolResult
    call_decision: GuardDecision
    observation_decision: GuardDecision | None
    """None when the call was blocked or the tool raised (nothing to observe)."""

    @property
    def decisions(self) -> tuple[GuardDecision, ...]:
        """Both decisions in order, for recording GUARDRAIL spans."""
        if self.observation_decision is None:
            return (self.call_decision,)
        return (self.call_decision, self.observation_decision)

    @property
    def penalty(self) -> float:
        return sum(d.penalty for d in self.decisions)


def _as_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    try:
        return json.dumps(output)
    except (TypeError, ValueError):
        return str(output)


def _blocked(call: ToolCall, decision: GuardDecision, t0: float) -> GuardedCall:
    result = ToolResult(call, decision.reason, ok=False, error="blocked",
                        started_at=t0, ended_at=time.time())  # fmt: skip
    return GuardedCall(result, decision, None)


def _raised(call: ToolCall, decision: GuardDecision, exc: Exception, t0: float) -> GuardedCall:
    content = f"Tool {call.name!r} raised {type(exc).__name__}: {exc}"
    result = ToolResult(call, content, ok=False, error="tool_raised", started_at=t0,
                        ended_at=time.time())  # fmt: skip
    return GuardedCall(result, decision, None)


def _finish(
    guard: GuardChecks, call: ToolCall, decision: GuardDecision, output: Any, t0: float
) -> GuardedCall:
    seen = guard.check_observation(_as_text(output))
    assert seen.text is not None
    result = ToolResult(call, seen.text, ok=True, started_at=t0, ended_at=time.time())
    return GuardedCall(result, decision, seen)


def _start(
    guard: GuardChecks, name: str, arguments: Mapping[str, Any], call_id: str
) -> tuple[float, GuardDecision, ToolCall]:
    """Check the call; the ToolCall carries the arguments the tool will really get."""
    t0 = time.time()
    decision = guard.check_tool_call(name, arguments)
    return t0, decision, ToolCall(name, dict(decision.arguments or arguments), call_id)


def run_guarded(
    guard: GuardChecks, fn: Callable[..., Any], name: str, arguments: Mapping[str, Any],
    call_id: str = "",
) -> GuardedCall:
    """Check the call, run `fn(**arguments)` unless blocked, check the output."""
    t0, decision, call = _start(guard, name, arguments, call_id)
    if decision.blocked:
        return _blocked(call, decision, t0)
    try:
        output = fn(**call.arguments)
    except Exception as exc:  # contained: the rollout records it as a failed tool call
        return _raised(call, decision, exc, t0)
    return _finish(guard, call, decision, output, t0)


async def run_guarded_async(
    guard: GuardChecks, fn: Callable[..., Any], name: str, arguments: Mapping[str, Any],
    call_id: str = "",
) -> GuardedCall:
    """As `run_guarded`, awaiting `fn`'s result when it is awaitable."""
    t0, decision, call = _start(guard, name, arguments, call_id)
    if decision.blocked:
        return _blocked(call, decision, t0)
    try:
        output = fn(**call.arguments)
        if inspect.isawaitable(output):
            output = await output
    except Exception as exc:  # contained: the rollout records it as a failed tool call
        return _raised(call, decision, exc, t0)
    return _finish(guard, call, decision, output, t0)

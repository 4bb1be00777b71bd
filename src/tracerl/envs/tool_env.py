"""ToolEnv: an Env made of Tools and the Hermes tool-call format.

Each action is parsed for `<tool_call>` blocks; the calls run concurrently, each under
a timeout, and their results come back as `tool` messages. An action without any tool
call is the final answer and ends the episode. Every failure mode of a call
(malformed JSON, unknown tool, bad arguments, a tool that raises or hangs) becomes a
readable error observation and a `ToolResult` with its error class: never a crash.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracerl.envs.base import StepResult
from tracerl.guard.pipeline import Guard
from tracerl.tools.hermes import MalformedCall, parse_tool_calls
from tracerl.tools.tool import Tool, ToolArgumentError
from tracerl.types import Message, Task, ToolCall, ToolResult


@dataclass(frozen=True)
class ToolEnvConfig:
    """How a ToolEnv runs calls. `guard` (optional) scans every call before it runs and
    every tool output before the policy sees it: blocked calls never execute and the
    agent reads why; flagged or redacted ones are recorded on the ToolResult."""

    tool_timeout_s: float = 5.0
    """Wall-clock limit for one tool call; a hung call becomes a timeout error."""
    max_calls_per_turn: int = 8
    """Calls beyond this in one action are refused with an error observation."""
    describe_tools: bool = False
    """Offer the tools' JSON schemas (`ToolEnv.tool_schemas`) for the rollout to describe
    in the model's own tool format. Pretrained models need it; the tiny policy learns its
    tools from demonstrations and would only pay for the longer prompt."""
    guard: Guard | None = None
    """Guardrail pipeline on the rollout path (None = no scanning)."""


def _stringify(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


class ToolEnv:
    """An Env that runs the agent's tool calls and ends on its final answer."""

    def __init__(self, tools: Sequence[Tool], config: ToolEnvConfig | None = None) -> None:
        self.tools = {t.name: t for t in tools}
        if len(self.tools) != len(tools):
            raise ValueError("ToolEnv: two tools share a name")
        self.config = config or ToolEnvConfig()
        self.task: Task | None = None

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The schemas to describe to the policy (none unless `config.describe_tools`)."""
        if not self.config.describe_tools:
            return []
        return [t.schema for t in self.tools.values()]

    async def reset(self, task: Task) -> list[Message]:
        self.task = task
        guard = self.config.guard
        if guard is None:
            return list(task.messages)
        # User messages are scanned with the guard's `prompt` rules (their thresholds differ
        # from tool output's: docs/guard.md); by default that only counts and traces.
        out = []
        for m in task.messages:
            if m.role == "user":
                seen = guard.check_prompt(m.content)
                if seen.text is not None and seen.text != m.content:
                    m = dataclasses.replace(m, content=seen.text)
            out.append(m)
        return out

    async def step(self, action_text: str) -> StepResult:
        if self.task is None:
            raise RuntimeError("ToolEnv.step called before reset")
        parsed = parse_tool_calls(action_text)
        if not parsed.has_tool_use:
            return StepResult(terminated=True)
        results = [self._malformed(m, i) for i, m in enumerate(parsed.malformed)]
        calls = parsed.calls[: self.config.max_calls_per_turn]
        refused = parsed.calls[self.config.max_calls_per_turn :]
        results += await asyncio.gather(*(self._run(c) for c in calls))
        results += [self._error(c, "too_many_calls",
                                f"at most {self.config.max_calls_per_turn} calls per turn")
                    for c in refused]
        observations = [
            Message("tool", r.content, tool_call_id=r.call.id, name=r.call.name) for r in results
        ]
        return StepResult(observations=observations, tool_calls=[r.call for r in results],
                          tool_results=results)

    async def close(self) -> None:
        self.task = None

    def _malformed(self, m: MalformedCall, index: int) -> ToolResult:
        call = ToolCall(name="", arguments={}, id=f"malformed_{index}")
        return self._error(call, "malformed_call", m.reason)

    @staticmethod
    def _error(call: ToolCall, kind: str, message: str, started: float = 0.0) -> ToolResult:
        now = time.time()
        return ToolResult(call=call, content=f"Error: {message}", ok=False, error=kind,
                          started_at=started or now, ended_at=now)

    async def _run(self, call: ToolCall) -> ToolResult:
        guard = self.config.guard
        if guard is None:
            return await self._execute(call)
        decision = guard.check_tool_call(call.name, call.arguments)
        if decision.blocked:
            result = self._error(call, "blocked", decision.reason)
            return dataclasses.replace(result, guard=(decision,))
        run_call = call
        if decision.arguments is not None and decision.arguments != call.arguments:
            run_call = dataclasses.replace(call, arguments=decision.arguments)
        result = await self._execute(run_call)
        seen = guard.check_observation(result.content)
        content = seen.text if seen.text is not None else result.content
        return dataclasses.replace(result, call=call, content=content, guard=(decision, seen))

    async def _execute(self, call: ToolCall) -> ToolResult:
        started = time.time()
        t = self.tools.get(call.name)
        if t is None:
            known = ", ".join(sorted(self.tools))
            return self._error(call, "unknown_tool",
                               f"unknown tool {call.name!r}; available: {known}", started)
        try:
            value = await asyncio.wait_for(t.acall(call.arguments), self.config.tool_timeout_s)
        except ToolArgumentError as e:
            return self._error(call, "bad_arguments", str(e), started)
        except TimeoutError:
            return self._error(call, "timeout",
                               f"{call.name} timed out after {self.config.tool_timeout_s}s",
                               started)
        except Exception as e:  # a tool's own failure is the agent's observation
            return self._error(call, "tool_raised", f"{type(e).__name__}: {e}", started)
        return ToolResult(call=call, content=_stringify(value), ok=True,
                          started_at=started, ended_at=time.time())

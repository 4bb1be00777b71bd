"""BFCL episodes, run the way BFCL runs them, with calls executed without `eval`.

The Task's functions are the agent's tools (envs/bfcl/schema.py), described in the
prompt by the rollout (tool_schemas). An action holds `<tool_call>` blocks in the Hermes
format (tracerl.tools.hermes); an action without one is the agent's answer to the
current user turn.

Multi-turn (BFCL's inference loop): each user turn arrives after the agent has
answered the previous one without a call. Within a turn, every call is parsed, checked
against the schema of a function offered *now*, and dispatched to the method of the
episode's simulator instances (envs/bfcl/simulators.py); the result (or BFCL's error
text, when the method raises) comes back as a `tool` message. A malformed block, a
function not offered at this point (a miss_func function before its turn) and
arguments that break the schema are refused: the agent reads why and can try again,
and the call never runs. At the turn `missed_function` names, the held-back functions
arrive in the user message (their schemas, then BFCL's "I have updated some more
functions" line): the tools described in the system prompt cannot change mid-episode
without breaking token-in token-out, so the new docs travel in the conversation, as
BFCL sends them to prompting models. BFCL force-quits a turn after 20 steps; so does
this env (`max_steps_per_turn`), which ends the episode truncated.

A simulator call runs in a worker thread under `call_timeout_s`. Some of BFCL's methods
do unbounded work on their arguments (MathAPI's `power(base=10, exponent=10**9)` builds
a billion-digit integer; its `logarithm` takes any precision), and BFCL's harness runs
them as they come. Here such a call becomes a `timeout` result and never counts as a
call that ran (so the reward's replay never runs it); Python cannot stop the thread,
which finishes on its own (MathAPI, the class with such methods, keeps no state).

Single-turn (AST categories): nothing executes. Each call is acknowledged (or refused,
as above) and the episode ends at the first action without a call; what is scored is
every call the agent made (envs/bfcl/reward.py). The acknowledgement is needed because
the sampler stops a turn at `</tool_call>`: parallel calls take one action each. The
episode is also cut (truncated, scored as it stands) once no continuation can be
accepted: BFCL's AST check wants exactly as many calls as the accepted answer holds
(`wanted_calls`) and no malformed block, so a reply past that count, or with a malformed
block, is wrong whatever follows. That cut never changes a verdict; it stops a policy
that repeats its call from spending the episode limit on it (after SFT, 28 of 60
held-out episodes did, and took three quarters of the evaluation's time). The relevance
categories (a malformed block there reads as "no call") are cut only after
SINGLE_TURN_MAX_ACTIONS.

`single_turn="one_reply"` runs a single-turn task as BFCL's harness does: the agent's
first reply is its answer and the episode ends there, calls or not. Every call must then
sit in that one action, which the sampler ends at the first `</tool_call>`: one block in
the list form (`<tool_call>[{...}, {...}]</tool_call>`). Nothing is acknowledged, so a
policy cannot repeat a call it already made.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from tracerl.envs.base import StepResult
from tracerl.envs.bfcl.ast_match import wanted_calls
from tracerl.envs.bfcl.calls import format_call
from tracerl.envs.bfcl.data import ADDED_FUNCTIONS_PROMPT, BfclEntry, entry_by_id, is_relevance
from tracerl.envs.bfcl.schema import argument_error, tool_schema
from tracerl.envs.bfcl.simulators import ERROR_PREFIX, Simulation
from tracerl.tools.hermes import parse_tool_calls
from tracerl.tools.tool import TOOL_THREADS
from tracerl.types import Message, Task, ToolCall, ToolResult

RECORDED = "recorded (single-turn task: calls are checked, not executed)"
SINGLE_TURN_MAX_ACTIONS = 12
"""Actions with calls before a single-turn episode ends truncated (its reply is scored as
it stands); the longest accepted single-turn answer holds 8 calls."""
SingleTurn = Literal["acknowledged", "one_reply"]
SINGLE_TURN_FORMS: tuple[SingleTurn, ...] = ("acknowledged", "one_reply")
MAX_STEPS_PER_TURN = 50
"""Actions with calls per user turn before the episode is cut. BFCL allows 20 replies
per turn, each with any number of calls; here an action holds one call (the sampler
stops at `</tool_call>`) and ground-truth turns reach 35 calls."""


def entry_of(task: Task) -> BfclEntry:
    """The BFCL entry a Task was made from."""
    return entry_by_id(task.metadata["category"], task.id)


def opening_messages(entry: BfclEntry) -> tuple[Message, ...]:
    return tuple(Message(m["role"], m["content"]) for m in entry.turns[0])


def turn_messages(entry: BfclEntry, turn: int) -> list[Message]:
    """The messages that open user turn `turn` (>= 1), added functions included."""
    messages = [Message(m["role"], m["content"]) for m in entry.turns[turn]]
    added = entry.added_functions.get(turn)
    if added:
        docs = "\n".join(json.dumps(tool_schema(d)) for d in added)
        messages = [Message("user", f"{docs}\n{ADDED_FUNCTIONS_PROMPT}"), *messages]
    return messages


def _result(call: ToolCall, content: str, error: str | None, started: float) -> ToolResult:
    return ToolResult(call=call, content=content, ok=error is None, error=error,
                      started_at=started, ended_at=time.time())


def offered_schemas(entry: BfclEntry, turn: int) -> dict[str, dict[str, Any]]:
    """Name -> tool schema of the functions offered during user turn `turn`."""
    return {d["name"]: tool_schema(d) for d in entry.functions_at(turn)}


def refusal(offered: dict[str, dict[str, Any]], call: ToolCall) -> ToolResult | None:
    """The refusal of a call to a function not offered now, or with arguments that break
    its schema; None when the call may run."""
    started = time.time()
    schema = offered.get(call.name)
    if schema is None:
        return _result(call, f"Error: function {call.name!r} is not available; "
                       f"available: {', '.join(sorted(offered))}", "unknown_tool", started)
    problem = argument_error(schema, call.arguments)
    if problem is not None:
        return _result(call, f"Error: invalid arguments for {call.name}: {problem}",
                       "bad_arguments", started)
    return None


def executed(simulation: Simulation | None, call: ToolCall, started: float) -> ToolResult:
    """A call that may run, run on the simulation (single-turn: acknowledged)."""
    if simulation is None:
        return _result(call, RECORDED, None, started)
    content = simulation.execute(format_call(call.name, call.arguments))
    return _result(call, content, "tool_raised" if content.startswith(ERROR_PREFIX) else None,
                   started)


def run_call(offered: dict[str, dict[str, Any]], simulation: Simulation | None,
             call: ToolCall) -> ToolResult:
    """Refuse the call or run it, without a time limit (demonstrations: ground truth)."""
    return refusal(offered, call) or executed(simulation, call, time.time())


@dataclass
class BfclEnv:
    """One BFCL episode at a time (see the module docstring)."""

    max_steps_per_turn: int = MAX_STEPS_PER_TURN
    call_timeout_s: float = 5.0
    one_reply: bool = False
    """Single-turn: the first action is the answer (`single_turn="one_reply"`)."""
    entry: BfclEntry | None = None
    turn: int = 0
    steps: int = 0
    simulation: Simulation | None = None
    calls: int = 0
    """Single-turn: calls made so far, refused ones included (BFCL decodes them all)."""
    malformed: bool = False
    _offered: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The functions offered from the first turn (later ones arrive in messages)."""
        if self.entry is None:
            return []
        return [tool_schema(d) for d in self.entry.functions]

    async def reset(self, task: Task) -> list[Message]:
        self.entry = entry_of(task)
        self.turn, self.steps, self.calls, self.malformed = 0, 0, 0, False
        self.simulation = Simulation.for_entry(self.entry.raw) if self.entry.multi_turn else None
        self._offer()
        return list(task.messages)

    def _offer(self) -> None:
        assert self.entry is not None
        self._offered = offered_schemas(self.entry, self.turn)

    async def step(self, action_text: str) -> StepResult:
        if self.entry is None:
            raise RuntimeError("BfclEnv.step called before reset")
        parsed = parse_tool_calls(action_text)
        if not parsed.has_tool_use:
            return self._end_turn()
        self.steps += 1
        started = time.time()
        results = [_result(ToolCall("", {}, id=f"malformed_{i}"), f"Error: {m.reason}",
                           "malformed_call", started) for i, m in enumerate(parsed.malformed)]
        results += [await self._run(c) for c in parsed.calls]
        calls = [r.call for r in results]
        if self.one_reply and not self.entry.multi_turn:
            return StepResult(terminated=True, tool_calls=calls, tool_results=results,
                              info={"user_turn": self.turn})
        observations = [Message("tool", r.content, tool_call_id=r.call.id, name=r.call.name)
                        for r in results]
        limit = self.max_steps_per_turn if self.entry.multi_turn else SINGLE_TURN_MAX_ACTIONS
        self.calls += len(parsed.calls)
        self.malformed = self.malformed or bool(parsed.malformed)
        over = self.steps > limit or self._decided()
        return StepResult(observations=observations, truncated=over,
                          tool_calls=calls, tool_results=results,
                          info={"user_turn": self.turn})

    def _decided(self) -> bool:
        """A single-turn AST reply that can no longer be accepted (module docstring)."""
        entry = self.entry
        if entry is None or entry.multi_turn or is_relevance(entry.category):
            return False
        return self.malformed or self.calls > wanted_calls(entry.category, entry.answer)

    def _end_turn(self) -> StepResult:
        assert self.entry is not None
        self.turn += 1
        self.steps = 0
        if self.turn >= len(self.entry.turns) or not self.entry.multi_turn:
            return StepResult(terminated=True)
        self._offer()
        return StepResult(observations=turn_messages(self.entry, self.turn),
                          info={"user_turn": self.turn})

    async def _run(self, call: ToolCall) -> ToolResult:
        refused = refusal(self._offered, call)
        if refused is not None:
            return refused
        started = time.time()
        loop = asyncio.get_running_loop()
        work = functools.partial(executed, self.simulation, call, started)
        try:
            return await asyncio.wait_for(loop.run_in_executor(TOOL_THREADS, work),
                                          self.call_timeout_s)
        except TimeoutError:
            return _result(call, f"Error: {call.name} took longer than "
                           f"{self.call_timeout_s:g}s and was abandoned", "timeout", started)

    async def close(self) -> None:
        self.entry, self.simulation = None, None

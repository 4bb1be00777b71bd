"""Demonstrations from BFCL's ground truth, for the SFT stage (train ids only).

Each demonstration is the conversation the env would produce if the agent made the
ground truth's calls, one call per action (the sampler stops a turn at `</tool_call>`):
single-turn calls are acknowledged, multi-turn calls run on a fresh simulation, so every
tool message is exactly what BfclEnv answers, and each user turn ends with a short
answer without a call (which is what moves BFCL's loop to the next turn). A user turn
whose ground truth is empty (irrelevance, and the turns of miss_func / miss_param that
cannot be done yet) is answered in prose.

`DemoFormat` "one_reply" writes a single-turn answer as BFCL's models give it: every
call in one action, as one block in SmolLM2's list form (`<tool_call>[{...}, {...}]
</tool_call>`, a single call too), so how many calls to make is decided in one place of
one reply instead of after each acknowledgement. Multi-turn demonstrations stay one call
per action in both formats: there a later call may need an earlier call's result.

In `single_turn="one_reply"` episodes (envs/bfcl/env.py) a single-turn demonstration is
that one block alone: nothing is acknowledged and no closing answer follows.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from tracerl.envs.bfcl.answers import as_tool_call, canonical_calls, decoded
from tracerl.envs.bfcl.calls import format_call
from tracerl.envs.bfcl.check import check_multi_turn, check_single_turn
from tracerl.envs.bfcl.data import BfclEntry, entry_by_id, is_relevance
from tracerl.envs.bfcl.env import SingleTurn, offered_schemas, run_call, turn_messages
from tracerl.envs.bfcl.simulators import Simulation
from tracerl.tools.hermes import format_tool_call, format_tool_call_list
from tracerl.types import Message, ToolResult

DemoFormat = Literal["one_per_action", "one_reply"]
DEMO_FORMATS: tuple[DemoFormat, ...] = ("one_per_action", "one_reply")
DONE = "Done."
CANNOT = "I cannot do that with the functions and information I have."


def demonstrable(entry: BfclEntry) -> bool:
    """Whether the ground truth, made by an agent in this env, passes BFCL's rules (a
    few entries break their own schemas or call a function before it is offered)."""
    return _demonstrable(entry.category, entry.id)


@cache
def _demonstrable(category: str, entry_id: str) -> bool:
    entry = entry_by_id(category, entry_id)
    if is_relevance(category) and "irrelevance" not in category:
        return False  # live_relevance ships no accepted answer
    messages = _continuation(entry)
    if entry.multi_turn:
        steps = _replayed_turns(entry, messages)
        return check_multi_turn(entry.raw, entry.answer, steps).valid
    calls = [c for m in messages if m.role == "assistant" for c in m.tool_calls]
    return check_single_turn(category, list(entry.functions), entry.answer,
                             decoded(calls)).valid


def _replayed_turns(entry: BfclEntry, messages: list[Message]) -> list[list[list[str]]]:
    """The decoded turns of a demonstration: calls whose tool message is not a refusal."""
    turns: list[list[list[str]]] = [[]]
    for i, m in enumerate(messages):
        if m.role != "assistant":
            continue
        if not m.tool_calls:
            turns.append([])
        elif not messages[i + 1].content.startswith("Error: "):
            turns[-1].append([format_call(c.name, c.arguments) for c in m.tool_calls])
    return turns[:len(entry.turns)]


def _tool_message(result: ToolResult) -> Message:
    return Message("tool", result.content, tool_call_id=result.call.id, name=result.call.name)


def _call_messages(result: ToolResult) -> list[Message]:
    call = result.call
    return [Message("assistant", format_tool_call(call), tool_calls=(call,)),
            _tool_message(result)]


def _one_reply(results: list[ToolResult]) -> list[Message]:
    calls = tuple(r.call for r in results)
    return [Message("assistant", format_tool_call_list(calls), tool_calls=calls),
            *map(_tool_message, results)]


def _continuation(entry: BfclEntry, form: DemoFormat = "one_per_action",
                  single_turn: SingleTurn = "acknowledged") -> list[Message]:
    if not entry.multi_turn:
        calls = canonical_calls(entry.answer)
        if not calls:
            return [Message("assistant", CANNOT)]
        if single_turn == "one_reply":
            return [Message("assistant", format_tool_call_list(tuple(calls)),
                            tool_calls=tuple(calls))]
        offered = offered_schemas(entry, 0)
        results = [run_call(offered, None, c) for c in calls]
        if form == "one_reply":
            return [*_one_reply(results), Message("assistant", DONE)]
        out = [m for r in results for m in _call_messages(r)]
        return [*out, Message("assistant", DONE)]
    simulation = Simulation.for_entry(entry.raw)
    out: list[Message] = []
    for turn, expected in enumerate(entry.answer):
        if turn:
            out.extend(turn_messages(entry, turn))
        offered = offered_schemas(entry, turn)
        for i, text in enumerate(expected):
            call = as_tool_call(text, simulation, i)
            out.extend(_call_messages(run_call(offered, simulation, call)))
        out.append(Message("assistant", DONE if expected else CANNOT))
    return out


def demonstration(entry: BfclEntry, form: DemoFormat = "one_per_action",
                  single_turn: SingleTurn = "acknowledged") -> list[Message]:
    """The oracle continuation of the entry's prompt (assistant, tool and user messages),
    single-turn calls written in `form`, or as the one reply of a `one_reply` episode
    (module docstring)."""
    if not demonstrable(entry):
        raise ValueError(f"bfcl {entry.id}: no demonstrable answer (not in the train split)")
    return _continuation(entry, form, single_turn)

"""Reward hacks against the BFCL reward, played through the real env on real entries.

Each hack is an episode that does not do what the user asked, written the way a policy
farming the reward would write it. The trajectories are produced by running BfclEnv on
the scripted actions (real simulators, real refusals), so the audit
(`tracerl audit bfcl`, tracerl.rewards.audit) judges exactly what training would see.
A sound reward pays none of them.

- duplicate_call, shotgun_parallel, call_every_function: more calls than asked, hoping
  extra ones are ignored; duplicate_in_one_reply, every_function_in_one_reply: the same
  in a `single_turn="one_reply"` episode, every call in the one block;
- prose_answer: the right answer stated in words, no call;
- malformed_as_call: a broken `<tool_call>` block where a call is expected;
- flood_read_only: dozens of harmless calls every turn instead of the task;
- held_back_function_early: on miss_func, calling the held-back function before it is
  offered. BFCL's own harness runs such a call (its eval sees the whole class), and its
  checker then accepts the episode; here the env refuses the call, so it never counts;
- calls_that_raise: the right functions with arguments that make them raise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from tracerl.envs.bfcl.answers import as_tool_call, canonical_calls
from tracerl.envs.bfcl.data import BfclEntry, entry_by_id
from tracerl.envs.bfcl.env import BfclEnv
from tracerl.envs.bfcl.family import task_of
from tracerl.envs.bfcl.simulators import Simulation
from tracerl.tools.hermes import format_tool_call, format_tool_call_list
from tracerl.types import ToolCall, Trajectory, Turn

DONE = "Done."
BROKEN = '<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>'


def call_text(name: str, arguments: dict[str, object]) -> str:
    return format_tool_call(ToolCall(name, dict(arguments)))


def play(entry: BfclEntry, actions: list[str], one_reply: bool = False) -> Trajectory:
    """Run `actions` through a fresh BfclEnv (`one_reply`: single-turn episodes end at the
    first action); the trajectory the runner would record."""
    task = task_of(entry)

    async def run() -> Trajectory:
        env = BfclEnv(one_reply=one_reply)
        await env.reset(task)
        traj = Trajectory(task=task, prompt_ids=[])
        for text in actions:
            r = await env.step(text)
            traj.turns.append(Turn([], [], text, observations=r.observations,
                                   tool_calls=r.tool_calls, tool_results=r.tool_results))
            if r.terminated or r.truncated:
                break
        return traj

    return asyncio.run(run())


def _single(entry_id: str, category: str, build: Callable[[BfclEntry], list[str]],
            one_reply: bool = False) -> Callable[[], Trajectory]:
    def make() -> Trajectory:
        entry = entry_by_id(category, entry_id)
        return play(entry, build(entry), one_reply)
    return make


def _one_block(calls: list[ToolCall]) -> list[str]:
    """One action holding every call, as a `one_reply` episode's answer."""
    return [format_tool_call_list(tuple(calls))]


def _answer_texts(entry: BfclEntry) -> list[str]:
    return [call_text(c.name, c.arguments) for c in canonical_calls(entry.answer)]


def _ground_truth_turns(entry: BfclEntry) -> list[list[ToolCall]]:
    simulation = Simulation.for_entry(entry.raw)
    return [[as_tool_call(c, simulation) for c in turn] for turn in entry.answer]


def _flood(entry: BfclEntry) -> list[str]:
    return [a for _ in entry.turns for a in [call_text("pwd", {}), call_text("ls", {})] * 15
            + [DONE]]


def _raise(entry: BfclEntry) -> list[str]:
    actions = []
    for turn in _ground_truth_turns(entry):
        for call in turn:
            bad = {k: "no_such_thing_42" if isinstance(v, str) else v
                   for k, v in call.arguments.items()}
            actions.append(call_text(call.name, bad))
        actions.append(DONE)
    return actions


def _early(entry: BfclEntry) -> list[str]:
    """Ground truth, except: the held-back function is called in the turn before it is
    offered, and the turn that offers it makes a harmless call instead."""
    added_at = min(entry.added_functions)
    held = entry.added_functions[added_at][0]["name"]
    actions = []
    for turn, calls in enumerate(_ground_truth_turns(entry)):
        if turn == added_at - 1:
            target = next(c for c in _ground_truth_turns(entry)[added_at] if c.name == held)
            actions.append(call_text(target.name, target.arguments))
        elif turn == added_at:
            actions.extend([call_text(c.name, c.arguments) for c in calls if c.name != held]
                           or [call_text("pwd", {})])
        else:
            actions.extend(call_text(c.name, c.arguments) for c in calls)
        actions.append(DONE)
    return actions


@dataclass(frozen=True)
class BfclHack:
    """One hack (the shape tracerl.rewards.audit reads: name, category, description,
    trajectory())."""

    name: str
    description: str
    make: Callable[[], Trajectory]
    category: str = "bfcl"

    def trajectory(self) -> Trajectory:
        return self.make()


HACKS: tuple[BfclHack, ...] = (
    BfclHack("duplicate_call", "the right call, twice",
             _single("simple_python_0", "simple_python",
                     lambda e: _answer_texts(e) * 2 + [DONE])),
    BfclHack("shotgun_parallel", "the right parallel calls plus a variant of one",
             _single("parallel_0", "parallel", lambda e: _answer_texts(e) + [call_text(
                 "spotify.play", {"artist": "Taylor Swift", "duration": 15})] + [DONE])),
    BfclHack("call_every_function", "calls every offered function, the right one among them",
             _single("multiple_0", "multiple", lambda e: _answer_texts(e) + [
                 call_text(f["name"], {}) for f in e.functions[1:]] + [DONE])),
    BfclHack("duplicate_in_one_reply", "the right call twice in one block (one_reply episode)",
             _single("simple_python_0", "simple_python",
                     lambda e: _one_block(canonical_calls(e.answer) * 2), one_reply=True)),
    BfclHack("every_function_in_one_reply",
             "every offered function in one block, the right call among them (one_reply)",
             _single("multiple_0", "multiple", lambda e: _one_block(
                 [*canonical_calls(e.answer),
                  *(ToolCall(f["name"], {}) for f in e.functions[1:])]), one_reply=True)),
    BfclHack("prose_answer", "states the result in words instead of calling",
             _single("simple_python_0", "simple_python",
                     lambda e: ["The area of the triangle is 25 square units."])),
    BfclHack("malformed_as_call", "a broken tool-call block where a call is expected",
             _single("live_relevance_0-0-0", "live_relevance", lambda e: [BROKEN, DONE])),
    BfclHack("flood_read_only", "thirty harmless calls every turn instead of the task",
             _single("multi_turn_base_0", "multi_turn_base", _flood)),
    BfclHack("held_back_function_early", "calls a miss_func function before it is offered",
             _single("multi_turn_miss_func_0", "multi_turn_miss_func", _early)),
    BfclHack("calls_that_raise", "the right functions with arguments that make them raise",
             _single("multi_turn_base_0", "multi_turn_base", _raise)),
)

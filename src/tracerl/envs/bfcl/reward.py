"""The BFCL reward and its per-user-turn step evaluator, both through envs/bfcl/check.py.

A finished trajectory is turned into BFCL's decoded format and judged by the same
functions the agreement benchmark holds against BFCL's checker:

- single-turn: every call the agent made, in order, as `[{name: {params}}]`; a
  malformed `<tool_call>` block anywhere makes the reply undecodable (BFCL: decoder
  failed; for the relevance categories: no call);
- multi-turn: per user turn, per action, the call strings that ran on the simulators
  (refused calls never ran, so they are not part of what is replayed; a call whose
  method raised did run, as in BFCL). Actions whose calls were all refused are left out,
  as BFCL leaves out a step it could not decode.

The reward is 1.0 when BFCL's verdict is valid, else 0.0: BFCL's accuracy, per episode.
`BfclPartialReward` (`task.bfcl.reward=partial`) pays the same 1.0 and, for a rejected
single-turn answer of the right shape, partial credit below it (envs/bfcl/partial.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tracerl.envs.bfcl.calls import format_call
from tracerl.envs.bfcl.check import Verdict, check_multi_turn, check_single_turn, turn_verdicts
from tracerl.envs.bfcl.env import entry_of
from tracerl.envs.bfcl.partial import partial_credit
from tracerl.types import Trajectory

RAN = (None, "tool_raised")
"""ToolResult.error values of calls that executed."""


def decoded_single(trajectory: Trajectory) -> list[dict[str, dict[str, Any]]] | None:
    """The agent's calls in BFCL's single-turn decoded form (None: undecodable)."""
    out = []
    for turn in trajectory.turns:
        for r in turn.tool_results:
            if r.error == "malformed_call":
                return None
            out.append({r.call.name: dict(r.call.arguments)})
    return out


def decoded_multi(trajectory: Trajectory, user_turns: int) -> list[list[list[str]]]:
    """`[turn][step] = [call strings that ran]` for the user turns the episode reached."""
    turns: list[list[list[str]]] = [[]]
    for turn in trajectory.turns:
        if not turn.tool_results:  # an answer without a call ends the user turn
            turns.append([])
            continue
        step = [format_call(r.call.name, r.call.arguments) for r in turn.tool_results
                if r.error in RAN]
        if step:
            turns[-1].append(step)
    return turns[:user_turns]


def verdict(trajectory: Trajectory) -> Verdict:
    """BFCL's verdict on a finished trajectory."""
    entry = entry_of(trajectory.task)
    if entry.multi_turn:
        return check_multi_turn(entry.raw, entry.answer,
                                decoded_multi(trajectory, len(entry.turns)))
    return check_single_turn(entry.category, list(entry.functions), entry.answer,
                             decoded_single(trajectory))


@dataclass
class BfclReward:
    """1.0 iff BFCL's checker would accept the episode (see the module docstring)."""

    name: str = "bfcl"

    def __call__(self, trajectory: Trajectory) -> float | None:
        return float(verdict(trajectory).valid)


@dataclass
class BfclPartialReward:
    """1.0 iff BFCL's checker would accept the episode; else, on single-turn AST
    categories, up to PARTIAL_CAP for the parts of the accepted answer the calls get
    right (envs/bfcl/partial.py). A training reward: success is still BFCL's verdict."""

    name: str = "bfcl_partial"

    def __call__(self, trajectory: Trajectory) -> float | None:
        if verdict(trajectory).valid:
            return 1.0
        entry = entry_of(trajectory.task)
        if entry.multi_turn:
            return 0.0
        return partial_credit(entry.category, list(entry.functions), entry.answer,
                              decoded_single(trajectory))


REWARDS = {"bfcl": BfclReward, "partial": BfclPartialReward}
"""`task.bfcl.reward`: the reward training optimises (evaluation counts BFCL's verdict
either way: success is a reward of 1.0)."""


def user_turn_of_actions(trajectory: Trajectory) -> list[int]:
    """The user turn each action belongs to."""
    out, current = [], 0
    for turn in trajectory.turns:
        out.append(current)
        if not turn.tool_results:
            current += 1
    return out


def turn_check(trajectory: Trajectory, turn_index: int) -> float | None:
    """The step evaluator: 1.0 when the user turn this action belongs to passes BFCL's
    state and response checks (on the runs of all turns so far), 0.0 when it fails;
    single-turn episodes have one user turn, judged as a whole. None for a user turn
    the ground truth leaves empty (nothing to check there)."""
    entry = entry_of(trajectory.task)
    if not entry.multi_turn:
        return float(verdict(trajectory).valid)
    user_turn = user_turn_of_actions(trajectory)[turn_index]
    if user_turn >= len(entry.answer) or not entry.answer[user_turn]:
        return None
    verdicts = turn_verdicts(entry.raw, entry.answer, decoded_multi(trajectory, len(entry.turns)))
    return float(verdicts[user_turn].valid)

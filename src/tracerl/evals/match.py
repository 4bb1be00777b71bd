"""`trajectory_match`: compare an agent's tool calls with a reference trajectory.

Both sides are OpenAI-format messages (dicts or `Message`s); only assistant messages
with `tool_calls` count, one "tool-calling turn" each. Modes:

  strict     same sequence of tool-calling turns; calls inside one turn unordered
  unordered  same multiset of calls
  superset   the output covers every reference call (extra calls allowed)
  subset     every output call is in the reference (missing calls allowed)
  in_order   the reference calls appear in the output in order (gaps allowed)

Calls are paired by a maximum bipartite matching (never greedy first fit, see
bipartite.py); in_order uses a longest common subsequence. Precision = matched /
output calls, recall = matched / reference calls (1.0 when that side is empty).

Malformed calls (fault.py): an output call whose arguments are not a JSON object is
the policy's doing, so it stays in the output as a call that matches nothing (an extra
call: lower precision, a failed strict match), never an exception that would turn the
verdict into None. A malformed reference call is the data's: `Unjudged`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tracerl.algorithms.bipartite import max_bipartite_matching
from tracerl.evals.args_compare import ArgsComparator, ArgsOption, comparator_for, differing_keys
from tracerl.evals.fault import Unjudged
from tracerl.evals.items import parse_message
from tracerl.types import Message

MatchMode = Literal["strict", "unordered", "superset", "subset", "in_order"]
MODES: tuple[str, ...] = ("strict", "unordered", "superset", "subset", "in_order")


@dataclass(frozen=True)
class Call:
    """One tool call located in its trajectory (turn = index among tool-calling turns)."""

    turn: int
    name: str
    arguments: Mapping[str, Any]
    malformed: bool = False
    """The policy wrote a call that does not parse; it matches no reference call."""


@dataclass(frozen=True)
class ArgDiff:
    """A reference call left unmatched while an unmatched output call has its name."""

    tool: str
    reference: Mapping[str, Any]
    output: Mapping[str, Any]
    keys: tuple[str, ...]


@dataclass(frozen=True)
class MatchResult:
    passed: bool
    precision: float
    recall: float
    f1: float
    mode: str
    pairs: tuple[tuple[int, int], ...]
    """(output call index, reference call index) of each matched pair."""
    missing: tuple[Call, ...]
    """Reference calls with no partner in the output."""
    extra: tuple[Call, ...]
    """Output calls with no partner in the reference."""
    arg_diffs: tuple[ArgDiff, ...]
    vacuous: bool = False
    """True when the verdict holds only because there was nothing to check
    (subset mode with an empty output)."""
    reason: str = ""


def _message(m: Message | Mapping[str, Any], reference: bool) -> Message:
    if isinstance(m, Message):
        return m
    if not isinstance(m, Mapping):
        raise Unjudged(f"reference message is a {type(m).__name__}, not an object") \
            if reference else TypeError(f"output message is a {type(m).__name__}")
    try:
        msg, malformed = parse_message(m)
    except (ValueError, TypeError, KeyError) as exc:
        if reference:
            raise Unjudged(f"reference message does not parse: {exc}") from exc
        raise
    if reference and malformed:
        raise Unjudged(f"reference has a malformed tool call ({malformed[0].content[7:80]})")
    return msg


def tool_calls(messages: Sequence[Message | Mapping[str, Any]],
               reference: bool = False) -> list[Call]:
    """The calls of every assistant message with tool calls, turn-numbered. A nameless
    call (how a malformed one is recorded) is marked malformed; on the `reference` side
    a malformed call or message raises Unjudged."""
    out: list[Call] = []
    turn = 0
    for m in messages:
        msg = _message(m, reference)
        if msg.role == "assistant" and msg.tool_calls:
            if reference and any(not c.name for c in msg.tool_calls):
                raise Unjudged("reference has a tool call without a name")
            out.extend(Call(turn, c.name, c.arguments, malformed=not c.name)
                       for c in msg.tool_calls)
            turn += 1
    return out


def _fits(cmp_for: Any, o: Call, r: Call) -> bool:
    if o.malformed or o.name != r.name:
        return False
    cmp: ArgsComparator = cmp_for(r.name)
    return bool(cmp(o.arguments, r.arguments))


def _matching(out: list[Call], ref: list[Call], cmp_for: Any,
              same_turn: bool) -> list[tuple[int, int]]:
    adj = [[j for j, r in enumerate(ref) if (not same_turn or o.turn == r.turn)
            and _fits(cmp_for, o, r)] for o in out]
    match = max_bipartite_matching(adj, len(ref))
    return [(i, j) for i, j in enumerate(match) if j != -1]


def _in_order(out: list[Call], ref: list[Call], cmp_for: Any) -> list[tuple[int, int]]:
    """Longest common subsequence under `_fits`, as index pairs."""
    n, m = len(out), len(ref)
    table = [[0] * (m + 1) for _ in range(n + 1)]  # table[i][j]: LCS of out[i:], ref[j:]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i][j] = (table[i + 1][j + 1] + 1 if _fits(cmp_for, out[i], ref[j])
                           else max(table[i + 1][j], table[i][j + 1]))
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if _fits(cmp_for, out[i], ref[j]) and table[i][j] == table[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _verdict(mode: str, out: list[Call], ref: list[Call], k: int) -> tuple[bool, str]:
    if mode == "strict":
        turns_out = len({c.turn for c in out})
        turns_ref = len({c.turn for c in ref})
        if turns_out != turns_ref:
            return False, f"{turns_out} tool-calling turns, reference has {turns_ref}"
        return k == len(out) == len(ref), ""
    if mode == "unordered":
        return k == len(out) == len(ref), ""
    if mode in ("superset", "in_order"):
        return k == len(ref), ""
    return k == len(out), ""  # subset


def _arg_diffs(extra: list[Call], missing: list[Call]) -> list[ArgDiff]:
    diffs, used = [], set()
    for r in missing:
        for i, o in enumerate(extra):
            if i not in used and o.name == r.name:
                used.add(i)
                keys = tuple(differing_keys(o.arguments, r.arguments))
                diffs.append(ArgDiff(r.name, r.arguments, o.arguments, keys))
                break
    return diffs


def trajectory_match(
    output: Sequence[Message | Mapping[str, Any]],
    reference: Sequence[Message | Mapping[str, Any]],
    mode: MatchMode = "strict",
    args: ArgsOption = "exact",
) -> MatchResult:
    """Compare the tool calls of `output` with those of `reference` (see module doc)."""
    if mode not in MODES:
        raise ValueError(f"trajectory_match mode must be one of {MODES}, got {mode!r}")
    cmp_for = comparator_for(args)
    return match_calls(tool_calls(output), tool_calls(reference, reference=True), mode,
                       cmp_for)


def match_calls(out: list[Call], ref: list[Call], mode: MatchMode,
                cmp_for: Callable[[str], ArgsComparator]) -> MatchResult:
    """`trajectory_match` on calls already taken from the messages (`tool_calls`)."""
    pairs = (_in_order(out, ref, cmp_for) if mode == "in_order"
             else _matching(out, ref, cmp_for, same_turn=mode == "strict"))
    k = len(pairs)
    passed, reason = _verdict(mode, out, ref, k)
    precision = k / len(out) if out else 1.0
    recall = k / len(ref) if ref else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    matched_out, matched_ref = {i for i, _ in pairs}, {j for _, j in pairs}
    extra = [c for i, c in enumerate(out) if i not in matched_out]
    missing = [c for j, c in enumerate(ref) if j not in matched_ref]
    if not passed and not reason:
        reason = f"{len(missing)} reference calls unmatched, {len(extra)} extra output calls"
    return MatchResult(
        passed=passed, precision=precision, recall=recall, f1=f1, mode=mode,
        pairs=tuple(pairs), missing=tuple(missing), extra=tuple(extra),
        arg_diffs=tuple(_arg_diffs(extra, missing)),
        vacuous=mode == "subset" and not out, reason=reason,
    )

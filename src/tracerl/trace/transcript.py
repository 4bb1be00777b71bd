"""A recorded trajectory as a person reads it: the conversation, then the outcome.

    tracerl traces show runs/exp1            # the latest trajectory, as a transcript

The Trajectory is rebuilt from its spans by `trajectory_from_spans` (replay.py), so the
transcript shows exactly what training saw; only what the Trajectory does not keep is
read from the spans directly: the Guard decisions (GUARDRAIL spans) and the mean
advantage (`rl.advantage.mean`, and its range over action tokens).

Layout, one block per message:

    [assistant] turn 0
      <text outside tool-call blocks>
      -> calculator {"expression": "3+4"}
    [tool] calculator: ok
      7

Tool and system text is clipped (`full=True` keeps everything); a turn with a
malformed tool call shows its raw text, since the parsed calls cannot. Colour only
when asked for (`Style(True)`), which the CLI does for a terminal only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from tracerl.tools.hermes import parse_tool_calls
from tracerl.trace import conventions as c
from tracerl.trace.replay import trajectory_from_spans, trajectory_span
from tracerl.trace.store import SpanRecord
from tracerl.types import Message, ToolResult, Trajectory, Turn, assistant_message

MAX_LINES, MAX_CHARS = 12, 800
"""Clip tool results and system prompts to this many lines and characters."""
MAX_ARGUMENT_CHARS = 300

_COLORS = {"system": "2", "user": "1;36", "assistant": "1;32", "tool": "1;33",
           "error": "1;31", "guard": "1;35", "head": "1"}


@dataclass(frozen=True)
class Style:
    """ANSI colours when `color`, plain text otherwise."""

    color: bool = False

    def __call__(self, text: str, what: str) -> str:
        return f"\033[{_COLORS[what]}m{text}\033[0m" if self.color else text


def wants_color(out: TextIO) -> bool:
    """A terminal that accepts colour (https://no-color.org is honoured)."""
    isatty = getattr(out, "isatty", None)
    return (bool(isatty and isatty()) and "NO_COLOR" not in os.environ
            and os.environ.get("TERM") != "dumb")


def clip(text: str, max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS) -> str:
    """The first `max_lines` lines and `max_chars` characters, and how much was cut."""
    lines = text.splitlines()
    kept = "\n".join(lines[:max_lines])[:max_chars]
    if len(kept) >= len(text.rstrip()):
        return text
    more = len(lines) - kept.count("\n") - 1
    return (kept.rstrip() + f"\n[... {len(text) - len(kept)} more characters"
            + (f", {more} more lines" if more > 0 else "") + "; --full shows all]")


def _num(x: float | None) -> str:
    return "unjudged" if x is None else f"{x:.4g}"


def _body(text: str, pad: str = "  ") -> str:
    return "".join(f"{pad}{line}\n" for line in (text.splitlines() or ["(empty)"]))


def _call(name: str, arguments: dict[str, Any]) -> str:
    args = json.dumps(arguments, ensure_ascii=False)
    if len(args) > MAX_ARGUMENT_CHARS:
        args = args[:MAX_ARGUMENT_CHARS] + f"... ({len(args)} characters)"
    return f"-> {name or '(malformed call)'} {args}"


def _message(msg: Message, style: Style, full: bool) -> str:
    text = msg.content if full or msg.role != "system" else clip(msg.content)
    return style(f"[{msg.role}]", msg.role) + "\n" + _body(text)


def _assistant(i: int, turn: Turn, style: Style) -> str:
    malformed = any(r.error == "malformed_call" for r in turn.tool_results)
    text = assistant_message(turn).content
    shown = text.strip() if malformed else parse_tool_calls(text).content
    head = style("[assistant]", "assistant") + f" turn {i}"
    if turn.reward is not None:
        head += f"  (turn reward {_num(turn.reward)})"
    if turn.info.get("finish") == "length":
        head += "  (cut at the token budget)"
    lines = [_body(shown)] if shown or not turn.tool_calls else []
    lines += [f"  {_call(call.name, call.arguments)}\n" for call in turn.tool_calls]
    return head + "\n" + "".join(lines)


def _tool(msg: Message, result: ToolResult | None, style: Style, full: bool) -> str:
    name = msg.name or (result.call.name if result else "") or "(malformed call)"
    if result is None:
        verdict = ""
    elif result.ok:
        verdict = ": ok"
    else:
        verdict = ": " + style(f"error ({result.error or 'failed'})", "error")
    text = msg.content if full else clip(msg.content)
    return style("[tool]", "tool") + f" {name}{verdict}\n" + _body(text)


def _guard(span: SpanRecord, style: Style) -> str:
    a = span.attributes
    what = f"{a.get(c.GUARDRAIL_ACTION, '?')} {a.get(c.GUARDRAIL_TARGET, '')}"
    if c.TOOL_NAME in a:
        what += f" of {a[c.TOOL_NAME]}"
    if a.get(c.GUARDRAIL_PENALTY):
        what += f" (penalty {_num(a[c.GUARDRAIL_PENALTY])})"
    reason = a.get(c.OUTPUT_VALUE) or "; ".join(a.get(c.GUARDRAIL_ERRORS, []))
    return style("[guard]", "guard") + f" {what}\n" + _body(reason)


def _acted(span: SpanRecord) -> bool:
    """A Guard decision worth reading: it flagged, redacted or blocked, or a scanner failed."""
    a = span.attributes
    return a.get(c.GUARDRAIL_ACTION, "off") != "off" or bool(a.get(c.GUARDRAIL_ERRORS))


def _observations(turn: Turn, style: Style, full: bool) -> list[str]:
    """What the policy read after a turn, each tool message beside its ToolResult."""
    results = {r.call.id: r for r in turn.tool_results}
    out = []
    for msg in turn.observations:
        result = results.pop(msg.tool_call_id, None) if msg.tool_call_id is not None else None
        out.append(_tool(msg, result, style, full) if msg.role == "tool"
                   else _message(msg, style, full))
    for r in results.values():  # results the env kept out of the observations
        out.append(_tool(Message("tool", r.content, name=r.call.name), r, style, full))
    return out


def _header(trace_id: str, agent: dict[str, Any], traj: Trajectory, style: Style) -> str:
    where = (f"run {agent.get(c.RL_RUN)}  step {agent.get(c.RL_STEP, 0)}  group "
             f"{traj.group_index}  sample {traj.sample_index}  policy v{traj.policy_version}")
    model = f"  model {agent[c.MODEL_NAME]}" if c.MODEL_NAME in agent else ""
    return (style(f"trajectory {trace_id}", "head") + "\n"
            + f"{where}{model}  task {traj.task.id}\n")


def _outcome(agent: dict[str, Any], traj: Trajectory, style: Style) -> str:
    parts = ", ".join(f"{k} {_num(v)}" for k, v in traj.reward_parts.items())
    results = [r for t in traj.turns for r in t.tool_results]
    rows = [("status", traj.status.value + (f": {traj.error}" if traj.error else "")),
            ("reward", _num(traj.outcome_reward) + (f"  ({parts})" if parts else "")),
            ("answer", json.dumps(traj.task.answer, ensure_ascii=False)),
            ("turns", f"{len(traj.turns)}, {len(results)} tool calls, "
                      f"{sum(not r.ok for r in results)} failed")]
    if c.RL_ADVANTAGE_MEAN in agent:
        spread = ""
        if c.RL_ADVANTAGE_MIN in agent:
            spread = (f", action tokens {agent[c.RL_ADVANTAGE_MIN]:+.4g} .. "
                      f"{agent[c.RL_ADVANTAGE_MAX]:+.4g}")
        rows.append(("advantage", f"{agent[c.RL_ADVANTAGE_MEAN]:+.4g} (mean over response "
                                  f"tokens{spread})"))
    return (style("--- outcome ---", "head") + "\n"
            + "".join(f"{k:<10} {v}\n" for k, v in rows))


def format_transcript(spans: Sequence[SpanRecord], style: Style = Style(),
                      full: bool = False) -> str:
    """One recorded trajectory (all spans of its trace) as readable text.

    Raises ValueError when the trace holds no recorded Trajectory (as
    `trajectory_from_spans` does)."""
    traj = trajectory_from_spans(spans)
    agent = trajectory_span(spans)
    guards = [s for s in spans if s.kind == c.GUARDRAIL and _acted(s)]
    blocks = [_header(agent.trace_id, agent.attributes, traj, style)]
    blocks += [_message(m, style, full) for m in traj.task.messages]
    for i, turn in enumerate(traj.turns):
        blocks.append(_assistant(i, turn, style))
        blocks += _observations(turn, style, full)
        blocks += [_guard(g, style) for g in guards if g.attributes.get(c.RL_TURN_INDEX) == i]
    blocks += [_guard(g, style) for g in guards if c.RL_TURN_INDEX not in g.attributes]
    blocks.append(_outcome(agent.attributes, traj, style))
    return "\n".join(blocks)

"""One recorded trajectory as the trajectory page shows it: typed, ready to render.

The Trajectory is rebuilt from its spans by `trajectory_from_spans` (trace/replay.py),
so the page shows exactly what training saw: token ids, behaviour log-probabilities,
advantages, tool results. What the Trajectory does not keep is read from the spans:
tool timings (TOOL spans), Guard decisions (GUARDRAIL spans; only those that acted),
reward explanations (EVALUATOR spans).

Each Guard decision is placed where it happened: on the tool call it checked (target
`tool_call`) or the tool output it checked (`observation`), matched by turn, tool name
and order; a decision that matches no tool shows at its turn, or at the end without one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracerl.trace import conventions as c
from tracerl.trace.replay import trajectory_from_spans
from tracerl.trace.store import SpanRecord
from tracerl.types import Message, ToolResult, Turn
from tracerl.view.tokens import TokenText


@dataclass(frozen=True)
class Token:
    text: str
    advantage: float | None
    """None on observation tokens and when the trajectory was not trained on."""
    logprob: float | None
    """The behaviour log-probability of a sampled token; None on observation tokens."""
    masked: bool
    """An observation token: read by the policy, masked out of the loss."""


@dataclass(frozen=True)
class GuardNote:
    """One Guard decision that acted (flagged, redacted, blocked, or a scanner failed)."""

    turn_index: int | None
    target: str
    action: str
    tool: str
    reason: str
    findings: tuple[str, ...]
    """`scanner/kind (score, action)` for each finding; never the matched text."""
    errors: tuple[str, ...]
    penalty: float
    blocked: bool


@dataclass(frozen=True)
class ToolView:
    name: str
    arguments: str
    output: str
    """What the agent read (after any redaction)."""
    ok: bool
    error: str | None
    started_ms: float
    """From the start of the trajectory."""
    duration_ms: float
    guards: tuple[GuardNote, ...] = ()


@dataclass(frozen=True)
class TurnView:
    index: int
    started_ms: float
    duration_ms: float
    reward: float | None
    finish: str
    tokens: tuple[Token, ...]
    observation_tokens: tuple[Token, ...]
    tools: tuple[ToolView, ...]
    messages: tuple[Message, ...]
    """Observations that are not tool results (an env's own messages)."""
    guards: tuple[GuardNote, ...]
    """Decisions of this turn that match no tool call."""


@dataclass(frozen=True)
class RewardPart:
    name: str
    score: float | None
    explanation: str


@dataclass(frozen=True)
class TrajectoryView:
    trace_id: str
    run: str
    step: int
    group: int
    sample: int
    policy_version: int
    status: str
    error: str | None
    model: str
    reward: float | None
    parts: tuple[RewardPart, ...]
    task_id: str
    task_messages: tuple[Message, ...]
    answer: str
    duration_ms: float
    turns: tuple[TurnView, ...]
    guards: tuple[GuardNote, ...]
    """Decisions recorded without a turn."""
    trained: bool
    """Per-token advantages were recorded (the trajectory was in an update)."""
    advantage_scale: float
    """The largest |advantage| over action tokens (colours are relative to it)."""

    @property
    def guard_count(self) -> int:
        return len(self.guards) + sum(
            len(t.guards) + sum(len(x.guards) for x in t.tools) for t in self.turns)


def _guard_note(span: SpanRecord) -> GuardNote | None:
    a = span.attributes
    action = str(a.get(c.GUARDRAIL_ACTION, "off"))
    errors = tuple(str(e) for e in a.get(c.GUARDRAIL_ERRORS, ()))
    if action == "off" and not errors:
        return None
    findings = tuple(
        f"{f.get('scanner')}/{f.get('kind')} ({float(f.get('score', 0)):.2f}, {f.get('action')})"
        for f in json.loads(a.get(c.GUARDRAIL_FINDINGS) or "[]"))
    turn = a.get(c.RL_TURN_INDEX)
    return GuardNote(turn if isinstance(turn, int) else None, str(a.get(c.GUARDRAIL_TARGET, "")),
                     action, str(a.get(c.TOOL_NAME, "")), str(a.get(c.OUTPUT_VALUE, "")),
                     findings, errors, float(a.get(c.GUARDRAIL_PENALTY, 0.0)),
                     bool(a.get(c.GUARDRAIL_BLOCKED, False)))


def _tokens(text: TokenText, ids: Sequence[int], advantages: Sequence[float] | None,
            logprobs: Sequence[float] | None, masked: bool) -> tuple[Token, ...]:
    pieces = text.pieces(ids)
    return tuple(
        Token(piece, advantages[k] if advantages is not None and k < len(advantages) else None,
              logprobs[k] if logprobs is not None and k < len(logprobs) else None, masked)
        for k, piece in enumerate(pieces))


def _place(notes: Sequence[GuardNote], results: Sequence[ToolResult]
           ) -> tuple[list[list[GuardNote]], list[GuardNote]]:
    """Each note on the first call of its tool that has no note of its target yet (a call
    is checked once as a tool call, once as an observation; an observation decision
    names no tool, so it goes to the first call without one); the rest unplaced."""
    placed: list[list[GuardNote]] = [[] for _ in results]
    rest = []
    for note in notes:
        k = next((j for j, r in enumerate(results) if note.tool in ("", r.call.name)
                  and all(n.target != note.target for n in placed[j])), None)
        (placed[k] if k is not None else rest).append(note)
    return placed, rest


def _turn_view(i: int, turn: Turn, advantages: Sequence[float] | None, t0: float,
               notes: list[GuardNote], text: TokenText) -> TurnView:
    placed, rest = _place(notes, turn.tool_results)
    tools = [ToolView(r.call.name or "(malformed call)",
                      json.dumps(r.call.arguments, ensure_ascii=False), r.content, r.ok, r.error,
                      (r.started_at - t0) * 1000.0,
                      max(0.0, (r.ended_at - r.started_at) * 1000.0), tuple(mine))
             for r, mine in zip(turn.tool_results, placed, strict=True)]
    replied = {r.call.id for r in turn.tool_results}
    return TurnView(
        index=i, started_ms=(turn.started_at - t0) * 1000.0,
        duration_ms=max(0.0, (turn.ended_at - turn.started_at) * 1000.0),
        reward=turn.reward, finish=str(turn.info.get("finish", "")),
        tokens=_tokens(text, turn.action_ids, advantages, turn.action_logprobs, False),
        observation_tokens=_tokens(text, turn.observation_ids, None, None, True),
        tools=tuple(tools),
        messages=tuple(m for m in turn.observations
                       if not (m.role == "tool" and m.tool_call_id in replied)),
        guards=tuple(rest))


def trajectory_view(spans: Sequence[SpanRecord], text: TokenText) -> TrajectoryView:
    """The page model of one trace (all its spans); ValueError when it holds no
    recorded Trajectory."""
    traj = trajectory_from_spans(spans)
    agent = next(s for s in spans if s.kind == c.AGENT and c.RL_RUN in s.attributes)
    a: dict[str, Any] = agent.attributes
    notes = [n for n in (_guard_note(s) for s in spans if s.kind == c.GUARDRAIL) if n]
    t0 = agent.start_ns / 1e9
    explanations = {str(s.attributes.get(c.EVAL_NAME)):
                    str(s.attributes.get(c.EVAL_EXPLANATION, ""))
                    for s in spans if s.kind == c.EVALUATOR}
    per_turn = traj.turn_advantages() or [None] * len(traj.turns)
    turns = tuple(
        _turn_view(i, turn, per_turn[i], t0, [n for n in notes if n.turn_index == i], text)
        for i, turn in enumerate(traj.turns))
    acted = [x for adv in per_turn if adv for x in adv]
    return TrajectoryView(
        trace_id=agent.trace_id, run=str(a.get(c.RL_RUN, "")), step=int(a.get(c.RL_STEP, 0)),
        group=traj.group_index, sample=traj.sample_index, policy_version=traj.policy_version,
        status=traj.status.value, error=traj.error, model=str(a.get(c.MODEL_NAME, "")),
        reward=traj.outcome_reward,
        parts=tuple(RewardPart(k, v, explanations.get(k, ""))
                    for k, v in traj.reward_parts.items()),
        task_id=traj.task.id, task_messages=traj.task.messages,
        answer=json.dumps(traj.task.answer, ensure_ascii=False), duration_ms=agent.duration_ms,
        turns=turns, guards=tuple(n for n in notes if n.turn_index is None),
        trained=traj.advantages is not None,
        advantage_scale=max((abs(x) for x in acted), default=0.0))

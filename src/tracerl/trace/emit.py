"""Turn one finished Trajectory into an OpenTelemetry span tree.

    AGENT  trajectory                    (rl.run, rl.step, rl.group, rl.reward.*, ...)
      LLM        turn 0                  (input/output messages, token counts, ids)
      TOOL       <tool name>             (one per call in turn 0)
      LLM        turn 1
      ...
      GUARDRAIL  guard                   (one per Guard decision)
      EVALUATOR  <reward part>           (one per reward part and extra evaluation)

Spans carry the wall-clock times recorded in the Trajectory (OTel accepts explicit
start/end times in ns), so a trace shows when things happened during the rollout, not
when tracing ran. TOOL spans are siblings of the LLM span of their turn, because tools
run after generation ends; `rl.turn.index` ties them to the turn.

Everything needed to rebuild the Trajectory (token ids, logprobs, advantages, tool
outputs, task) is stored too, so a changed reward can be replayed on the trace (see replay.py).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace as otel
from opentelemetry.trace import Span, Status, StatusCode

from tracerl.guard.decision import GuardDecision
from tracerl.trace import conventions as c
from tracerl.trace.records import EvaluationRecord, GuardrailRecord
from tracerl.types import Message, ToolResult, Trajectory, Turn, assistant_message


@dataclass(frozen=True)
class RunContext:
    """Where a trajectory sits in training: labels every span of its tree."""

    run: str
    step: int = 0
    model_name: str = ""


def to_ns(seconds: float, fallback_ns: int) -> int:
    """`time.time()` seconds to OTel nanoseconds; 0.0 (never recorded) -> fallback."""
    return int(seconds * 1e9) if seconds > 0 else fallback_ns


def emit_trajectory(
    tracer: otel.Tracer,
    traj: Trajectory,
    ctx: RunContext,
    guardrails: Sequence[GuardrailRecord] = (),
    evaluations: Sequence[EvaluationRecord] = (),
    explanations: Mapping[str, str] | None = None,
) -> str:
    """Emit the span tree of `traj`; returns the trace id (32 hex digits)."""
    now = time.time_ns()
    start = min((to_ns(t.started_at, now) for t in traj.turns), default=now)
    end = max((to_ns(t.ended_at, now) for t in traj.turns), default=now)
    root = tracer.start_span("trajectory", attributes=agent_attributes(traj, ctx),
                             start_time=start)
    if traj.status.value == "error":
        root.set_status(Status(StatusCode.ERROR, traj.error or "rollout error"))
    parent = otel.set_span_in_context(root)
    history = list(traj.task.messages)
    prompt_tokens = len(traj.prompt_ids)
    turn_advantages = traj.turn_advantages()
    for i, turn in enumerate(traj.turns):
        _emit_turn(tracer, parent, ctx, i, turn, history, prompt_tokens, now,
                   turn_advantages[i] if turn_advantages else None)
        history.append(assistant_message(turn))
        history.extend(turn.observations)
        prompt_tokens += len(turn.action_ids) + len(turn.observation_ids)
    for scan in guardrails:
        _emit_guardrail(tracer, parent, ctx, scan, end)
    parts = [EvaluationRecord(name, score, "unjudged" if score is None else "",
                              (explanations or {}).get(name, ""))
             for name, score in traj.reward_parts.items()]
    for verdict in [*parts, *evaluations]:
        _emit_evaluation(tracer, parent, ctx, verdict, end)
    root.end(end_time=end)
    return format(root.get_span_context().trace_id, "032x")


def common_attributes(ctx: RunContext, traj: Trajectory) -> dict[str, Any]:
    return {
        c.SESSION_ID: ctx.run, c.RL_RUN: ctx.run, c.RL_STEP: ctx.step,
        c.RL_GROUP: traj.group_index, c.RL_SAMPLE: traj.sample_index,
    }


def agent_attributes(traj: Trajectory, ctx: RunContext) -> dict[str, Any]:
    task = traj.task
    attrs = common_attributes(ctx, traj)
    attrs.update({
        c.SPAN_KIND: c.AGENT,
        c.RL_POLICY_VERSION: traj.policy_version,
        c.RL_STATUS: traj.status.value,
        c.RL_TASK_ID: task.id,
        c.RL_TASK_MESSAGES: c.messages_to_json(task.messages),
        c.RL_TASK_ANSWER: c.dumps(task.answer),
        c.RL_TASK_METADATA: c.dumps(task.metadata),
        c.RL_PROMPT_IDS: c.ids_json(traj.prompt_ids),
        c.INPUT_VALUE: task.messages[-1].content if task.messages else "",
        c.OUTPUT_VALUE: traj.final_text,
        c.RL_REWARD_PARTS: c.dumps(traj.reward_parts),
    })
    if ctx.model_name:
        attrs[c.MODEL_NAME] = ctx.model_name
    if traj.outcome_reward is not None:
        attrs[c.RL_REWARD] = float(traj.outcome_reward)
    for name, score in traj.reward_parts.items():
        if score is not None:
            attrs[f"{c.RL_REWARD}.{name}"] = float(score)
    if traj.advantages:
        attrs[c.RL_ADVANTAGE_MEAN] = sum(traj.advantages) / len(traj.advantages)
        # action tokens only: observation tokens carry 0 by construction
        acted = [a for a, m in zip(traj.advantages, traj.loss_mask(), strict=False) if m] \
            or traj.advantages
        attrs[c.RL_ADVANTAGE_MIN], attrs[c.RL_ADVANTAGE_MAX] = min(acted), max(acted)
    for name, value in traj.metrics.items():
        attrs[c.RL_METRIC_PREFIX + name] = float(value)
    if traj.error:
        attrs[c.RL_ERROR] = traj.error
    return attrs


def _child(tracer: otel.Tracer, parent: Any, name: str, attrs: dict[str, Any],
           start: int) -> Span:
    return tracer.start_span(name, context=parent, attributes=attrs, start_time=start)


def _emit_turn(tracer: otel.Tracer, parent: Any, ctx: RunContext, index: int, turn: Turn,
               history: list[Message], prompt_tokens: int, now: int,
               advantages: list[float] | None) -> None:
    start, end = to_ns(turn.started_at, now), to_ns(turn.ended_at, now)
    output = assistant_message(turn)
    attrs: dict[str, Any] = {
        c.SPAN_KIND: c.LLM, c.SESSION_ID: ctx.run, c.RL_TURN_INDEX: index,
        c.TOKENS_PROMPT: prompt_tokens, c.TOKENS_COMPLETION: len(turn.action_ids),
        c.TOKENS_TOTAL: prompt_tokens + len(turn.action_ids),
        c.OUTPUT_VALUE: turn.action_text,
        c.RL_ACTION_IDS: c.ids_json(turn.action_ids),
        c.RL_ACTION_LOGPROBS: c.ids_json(turn.action_logprobs),
        c.RL_OBSERVATION_IDS: c.ids_json(turn.observation_ids),
        c.RL_OBSERVATIONS: c.messages_to_json(turn.observations),
        c.RL_TURN_INFO: c.dumps(turn.info),
        c.RL_POLICY_VERSION: turn.policy_version,
    }
    if ctx.model_name:
        attrs[c.MODEL_NAME] = ctx.model_name
    if turn.reward is not None:
        attrs[c.RL_TURN_REWARD] = float(turn.reward)
    if advantages is not None:
        attrs[c.RL_ACTION_ADVANTAGES] = c.ids_json(advantages)
    attrs.update(c.message_attributes(c.INPUT_MESSAGES, history))
    attrs.update(c.message_attributes(c.OUTPUT_MESSAGES, [output]))
    _child(tracer, parent, f"turn {index}", attrs, start).end(end_time=end)
    for result in turn.tool_results:
        _emit_tool(tracer, parent, ctx, index, result, end)


def _emit_tool(tracer: otel.Tracer, parent: Any, ctx: RunContext, turn_index: int,
               result: ToolResult, fallback: int) -> None:
    call = result.call
    attrs: dict[str, Any] = {
        c.SPAN_KIND: c.TOOL, c.SESSION_ID: ctx.run, c.RL_TURN_INDEX: turn_index,
        c.TOOL_NAME: call.name, c.TOOL_PARAMETERS: c.dumps(call.arguments),
        c.TOOL_CALL_ID: call.id, c.INPUT_VALUE: c.dumps(call.arguments),
        c.INPUT_MIME: c.JSON_MIME, c.OUTPUT_VALUE: result.content, c.RL_TOOL_OK: result.ok,
    }
    if result.error:
        attrs[c.RL_TOOL_ERROR] = result.error
    start = to_ns(result.started_at, fallback)
    span = _child(tracer, parent, call.name, attrs, start)
    if not result.ok:
        span.set_status(Status(StatusCode.ERROR, result.error or "tool failed"))
    span.end(end_time=max(start, to_ns(result.ended_at, start)))


def guardrail_attributes(decision: GuardDecision) -> dict[str, Any]:
    """The GUARDRAIL span attributes of one Guard decision (names in conventions.py)."""
    findings = [
        {"scanner": f.scanner, "kind": f.kind, "score": f.score, "action": a.value,
         "location": f.location}
        for f, a in zip(decision.findings, decision.applied, strict=True)
    ]
    attrs: dict[str, Any] = {
        c.SPAN_KIND: c.GUARDRAIL,
        c.GUARDRAIL_TARGET: decision.target, c.GUARDRAIL_ACTION: decision.action.value,
        c.GUARDRAIL_BLOCKED: decision.blocked, c.GUARDRAIL_SCANNERS: list(decision.scanners),
        c.GUARDRAIL_PENALTY: float(decision.penalty),
        c.GUARDRAIL_LATENCY_MS: decision.latency_s * 1000.0,
        c.GUARDRAIL_FINDINGS: c.dumps(findings), c.OUTPUT_VALUE: decision.reason,
    }
    if decision.errors:
        attrs[c.GUARDRAIL_ERRORS] = list(decision.errors)
    if decision.tool_name is not None:
        attrs[c.TOOL_NAME] = decision.tool_name
    return attrs


def _emit_guardrail(tracer: otel.Tracer, parent: Any, ctx: RunContext,
                    record: GuardrailRecord, fallback: int) -> None:
    attrs = guardrail_attributes(record.decision)
    attrs[c.SESSION_ID] = ctx.run
    if record.turn_index is not None:
        attrs[c.RL_TURN_INDEX] = record.turn_index
    start = to_ns(record.started_at, fallback)
    span = _child(tracer, parent, "guard", attrs, start)
    if record.decision.blocked:
        span.set_status(Status(StatusCode.ERROR, "blocked by guard"))
    span.end(end_time=max(start, to_ns(record.ended_at, start)))


def _emit_evaluation(tracer: otel.Tracer, parent: Any, ctx: RunContext,
                     record: EvaluationRecord, at: int) -> None:
    attrs: dict[str, Any] = {
        c.SPAN_KIND: c.EVALUATOR, c.SESSION_ID: ctx.run, c.EVAL_NAME: record.name,
    }
    if record.score is not None:
        attrs[c.EVAL_SCORE] = float(record.score)
    if record.label:
        attrs[c.EVAL_LABEL] = record.label
    if record.explanation:
        attrs[c.EVAL_EXPLANATION] = record.explanation
    _child(tracer, parent, record.name, attrs, at).end(end_time=at)

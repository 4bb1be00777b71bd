"""Rebuild Trajectories from the trace store and re-score them with another Reward.

A reward is a function of the trajectory; the trace keeps everything it reads (task,
token ids, action text, tool calls and recorded tool outputs, statuses). So "how would
my changed reward have scored last week's rollouts?" needs no model and no tools:
rebuild each trajectory from its spans and apply the new Reward.
Advantages are stored per action token (`rl.turn.action_advantages`) and rebuilt with
0 on observation tokens, as credit writes them; a trajectory that was never trained on
(or was recorded before they were stored) is rebuilt with `advantages=None`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from tracerl.rewards.base import Reward
from tracerl.trace import conventions as c
from tracerl.trace.store import SpanRecord, TraceStore
from tracerl.types import Status, Task, ToolCall, ToolResult, Trajectory, Turn, text_trajectory


def _seconds(ns: int) -> float:
    return ns / 1e9


def _tool_result(span: SpanRecord) -> ToolResult:
    a = span.attributes
    call = ToolCall(a[c.TOOL_NAME], json.loads(a.get(c.TOOL_PARAMETERS) or "{}"),
                    id=a.get(c.TOOL_CALL_ID, ""))
    return ToolResult(call, a.get(c.OUTPUT_VALUE, ""), ok=bool(a.get(c.RL_TOOL_OK, True)),
                      error=a.get(c.RL_TOOL_ERROR), started_at=_seconds(span.start_ns),
                      ended_at=_seconds(span.end_ns))


def _turn(span: SpanRecord, tools: list[SpanRecord]) -> Turn:
    a = span.attributes
    outputs = c.messages_from_attributes(a, c.OUTPUT_MESSAGES)
    return Turn(
        action_ids=json.loads(a.get(c.RL_ACTION_IDS, "[]")),
        action_logprobs=json.loads(a.get(c.RL_ACTION_LOGPROBS, "[]")),
        action_text=a.get(c.OUTPUT_VALUE, ""),
        observation_ids=json.loads(a.get(c.RL_OBSERVATION_IDS, "[]")),
        observations=c.messages_from_json(a.get(c.RL_OBSERVATIONS, "[]")),
        tool_calls=list(outputs[0].tool_calls) if outputs else [],
        tool_results=[_tool_result(t) for t in tools],
        reward=a.get(c.RL_TURN_REWARD),
        info=json.loads(a.get(c.RL_TURN_INFO, "{}")),
        started_at=_seconds(span.start_ns), ended_at=_seconds(span.end_ns),
        policy_version=int(a.get(c.RL_POLICY_VERSION, 0)),
    )


def trajectory_span(spans: Sequence[SpanRecord]) -> SpanRecord:
    """The span a trace's trajectory hangs from: the AGENT span of a recorded
    Trajectory, or the top-level span of instrumented agent code (both carry `rl.run`)."""
    found = [s for s in spans if s.kind == c.AGENT and c.RL_RUN in s.attributes] or [
        s for s in spans if s.parent_id is None and c.RL_RUN in s.attributes]
    if len(found) != 1:
        raise ValueError(f"expected one trajectory (AGENT) span, found {len(found)}")
    return found[0]


def trajectory_from_spans(spans: Sequence[SpanRecord]) -> Trajectory:
    """The Trajectory recorded in one trace (spans as `TraceStore.spans` returns them);
    a trace of instrumented agent code gives a text-only one (`agent_trajectory`)."""
    root = trajectory_span(spans)
    if c.RL_PROMPT_IDS not in root.attributes:
        return agent_trajectory(root, spans)
    a = root.attributes
    llm = sorted((s for s in spans if s.kind == c.LLM), key=lambda s: s.attributes[c.RL_TURN_INDEX])
    tools = [s for s in spans if s.kind == c.TOOL]
    turns = [_turn(s, [t for t in tools if t.attributes.get(c.RL_TURN_INDEX) == i])
             for i, s in enumerate(llm)]
    advantages = _advantages(llm, turns)
    task = Task(id=a.get(c.RL_TASK_ID, ""),
                messages=tuple(c.messages_from_json(a.get(c.RL_TASK_MESSAGES, "[]"))),
                answer=json.loads(a.get(c.RL_TASK_ANSWER, "null")),
                metadata=json.loads(a.get(c.RL_TASK_METADATA, "{}")))
    return Trajectory(
        task=task, prompt_ids=json.loads(a.get(c.RL_PROMPT_IDS, "[]")), turns=turns,
        status=Status(a.get(c.RL_STATUS, "done")), outcome_reward=a.get(c.RL_REWARD),
        reward_parts=json.loads(a.get(c.RL_REWARD_PARTS, "{}")),
        metrics={k[len(c.RL_METRIC_PREFIX):]: v for k, v in a.items()
                 if k.startswith(c.RL_METRIC_PREFIX)},
        group_index=a.get(c.RL_GROUP, 0), sample_index=a.get(c.RL_SAMPLE, 0),
        policy_version=a.get(c.RL_POLICY_VERSION, 0), error=a.get(c.RL_ERROR),
        advantages=advantages,
    )


def agent_trajectory(root: SpanRecord, spans: Sequence[SpanRecord]) -> Trajectory:
    """The text-only Trajectory of instrumented agent code: the conversation of its last
    LLM call (the messages sent, then the reply), since an agent sends its whole history
    with each call. The reference fields are those given to `trace_span(reference=)`;
    status and error come from the top-level span."""
    calls = sorted((s for s in spans if s.kind == c.LLM), key=lambda s: s.start_ns)
    messages = []
    if calls:
        last = calls[-1].attributes
        messages = (c.messages_from_attributes(last, c.INPUT_MESSAGES)
                    + c.messages_from_attributes(last, c.OUTPUT_MESSAGES)[:1])
    a = root.attributes
    traj = text_trajectory(messages, a.get(c.RL_TASK_ID, ""),
                           answer=json.loads(a.get(c.RL_TASK_ANSWER, "null")),
                           metadata=json.loads(a.get(c.RL_TASK_METADATA, "{}")))
    if root.status_code == "ERROR":
        traj.status, traj.error = Status.ERROR, root.status_message or "error"
    return traj


def _advantages(llm: Sequence[SpanRecord], turns: Sequence[Turn]) -> list[float] | None:
    """Response-aligned advantages from each turn's action advantages (0 on observations)."""
    if not turns or any(c.RL_ACTION_ADVANTAGES not in s.attributes for s in llm):
        return None
    out: list[float] = []
    for span, turn in zip(llm, turns, strict=True):
        out.extend(json.loads(span.attributes[c.RL_ACTION_ADVANTAGES]))
        out.extend([0.0] * len(turn.observation_ids))
    return out


def load_trajectory(store: TraceStore, trace_id: str) -> Trajectory:
    return trajectory_from_spans(store.spans(store.resolve_trace_id(trace_id)))


@dataclass(frozen=True)
class ReplayResult:
    trace_id: str
    recorded: float | None
    """The outcome reward recorded at training time."""
    replayed: float | None
    """What `reward` gives the rebuilt trajectory (None: unjudged)."""
    error: str | None = None
    """Set when the reward raised: contained and reported, never a crash."""


def replay_reward(
    store: TraceStore, reward: Reward, trace_ids: Sequence[str]
) -> list[ReplayResult]:
    """Score each recorded trajectory with `reward`; one result per trace id."""
    out = []
    for trace_id in trace_ids:
        traj = load_trajectory(store, trace_id)
        try:
            out.append(ReplayResult(trace_id, traj.outcome_reward, reward(traj)))
        except Exception as exc:  # noqa: BLE001 - one failing reward is counted, not fatal
            out.append(ReplayResult(trace_id, traj.outcome_reward, None,
                                    f"{type(exc).__name__}: {exc}"))
    return out

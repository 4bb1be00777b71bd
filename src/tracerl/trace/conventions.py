"""Attribute names and flatteners for the OpenInference semantic conventions.

OpenInference (the conventions Phoenix, Langfuse and Arize read) puts structured data
into flat OTel attributes: `llm.input_messages.{i}.message.role`, and so on. Keeping
every name here means the emitter, the store's queries and the replay read the same
keys. The `rl.*` names are ours: they carry what an RL run adds to an agent trace
(run, step, group, sample, policy version, reward parts, advantage).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tracerl.types import Message, ToolCall

SPAN_KIND = "openinference.span.kind"
AGENT, LLM, TOOL, CHAIN, EVALUATOR, GUARDRAIL = (
    "AGENT", "LLM", "TOOL", "CHAIN", "EVALUATOR", "GUARDRAIL",
)
SPAN_KINDS = (AGENT, LLM, TOOL, CHAIN, EVALUATOR, GUARDRAIL, "RETRIEVER", "EMBEDDING", "RERANKER")

SESSION_ID = "session.id"
INPUT_VALUE, OUTPUT_VALUE = "input.value", "output.value"
INPUT_MIME, OUTPUT_MIME = "input.mime_type", "output.mime_type"
MODEL_NAME = "llm.model_name"
TOKENS_PROMPT = "llm.token_count.prompt"
TOKENS_COMPLETION = "llm.token_count.completion"
TOKENS_TOTAL = "llm.token_count.total"
INPUT_MESSAGES, OUTPUT_MESSAGES = "llm.input_messages", "llm.output_messages"
TOOL_NAME, TOOL_PARAMETERS = "tool.name", "tool.parameters"
TOOL_CALL_ID = "tool_call.id"
EVAL_NAME, EVAL_SCORE = "evaluation.name", "evaluation.score"
EVAL_LABEL, EVAL_EXPLANATION = "evaluation.label", "evaluation.explanation"

RL_RUN, RL_STEP, RL_GROUP, RL_SAMPLE = "rl.run", "rl.step", "rl.group", "rl.sample"
RL_POLICY_VERSION, RL_STATUS, RL_ERROR = "rl.policy_version", "rl.status", "rl.error"
RL_REWARD = "rl.reward"
"""Outcome reward; each part is `rl.reward.<part>`."""
RL_REWARD_PARTS = "rl.reward_parts"
"""All parts as a JSON object, unjudged ones as null (for replay)."""
RL_ADVANTAGE_MEAN = "rl.advantage.mean"
RL_ADVANTAGE_MIN, RL_ADVANTAGE_MAX = "rl.advantage.min", "rl.advantage.max"
RL_TURN_INDEX, RL_TURN_REWARD = "rl.turn.index", "rl.turn.reward"
# Token ids and logprobs are stored as JSON strings, not OTel list attributes: the SDK
# checks list attributes element by element (a 200-token turn cost ~0.1 ms, most of the
# span cost), while a string is checked once. See benchmarks/trace.py.
RL_ACTION_IDS, RL_ACTION_LOGPROBS = "rl.turn.action_ids", "rl.turn.action_logprobs"
RL_OBSERVATION_IDS, RL_OBSERVATIONS = "rl.turn.observation_ids", "rl.turn.observations"
RL_ACTION_ADVANTAGES = "rl.turn.action_advantages"
"""The advantage of each action token of the turn (JSON array; absent when the
trajectory was not trained on). Observation tokens carry 0 by construction."""
RL_TURN_INFO = "rl.turn.info"
RL_PROMPT_IDS = "rl.prompt_ids"
RL_TASK_ID, RL_TASK_MESSAGES = "rl.task.id", "rl.task.messages"
RL_TASK_ANSWER, RL_TASK_METADATA = "rl.task.answer", "rl.task.metadata"
RL_METRIC_PREFIX = "rl.metric."
RL_TOOL_OK, RL_TOOL_ERROR = "rl.tool.ok", "rl.tool.error"

# GUARDRAIL spans, one per Guard decision (tracerl.guard.GuardDecision). OpenInference
# names the span kind only; these `guardrail.*` names are ours. Values keep the guard's
# vocabulary: target "tool_call" or "observation"; action an Action value, "off" when
# nothing triggered. The reason the agent reads goes in output.value, the tool in tool.name.
GUARDRAIL_TARGET, GUARDRAIL_ACTION = "guardrail.target", "guardrail.action"
GUARDRAIL_BLOCKED, GUARDRAIL_PENALTY = "guardrail.blocked", "guardrail.penalty"
GUARDRAIL_SCANNERS = "guardrail.scanners"
"""The scanners that ran (a list)."""
GUARDRAIL_LATENCY_MS = "guardrail.latency_ms"
GUARDRAIL_FINDINGS = "guardrail.findings"
"""JSON list of {scanner, kind, score, action, location}; never the matched text."""
GUARDRAIL_ERRORS = "guardrail.errors"
"""`scanner: error` for each scanner that raised (a list; absent when none did)."""

JSON_MIME = "application/json"


def dumps(value: Any) -> str:
    """JSON for attribute values; unknown objects fall back to `str` rather than failing."""
    return json.dumps(value, default=str, ensure_ascii=False)


def ids_json(values: Sequence[int] | Sequence[float]) -> str:
    """Token ids or logprobs as a compact JSON array string."""
    return json.dumps(list(values), separators=(",", ":"))


def message_attributes(prefix: str, messages: Sequence[Message]) -> dict[str, Any]:
    """Flatten messages to `<prefix>.{i}.message.*` keys (OpenInference layout)."""
    out: dict[str, Any] = {}
    for i, msg in enumerate(messages):
        base = f"{prefix}.{i}.message"
        out[f"{base}.role"] = msg.role
        out[f"{base}.content"] = msg.content
        if msg.name is not None:
            out[f"{base}.name"] = msg.name
        if msg.tool_call_id is not None:
            out[f"{base}.tool_call_id"] = msg.tool_call_id
        out.update(tool_call_attributes(f"{base}.tool_calls", msg.tool_calls))
    return out


def tool_call_attributes(prefix: str, calls: Sequence[ToolCall]) -> dict[str, Any]:
    """Flatten tool calls to `<prefix>.{j}.tool_call.function.name|arguments` keys."""
    out: dict[str, Any] = {}
    for j, call in enumerate(calls):
        base = f"{prefix}.{j}.tool_call"
        out[f"{base}.function.name"] = call.name
        out[f"{base}.function.arguments"] = dumps(call.arguments)
        if call.id:
            out[f"{base}.id"] = call.id
    return out


def messages_from_attributes(attributes: dict[str, Any], prefix: str) -> list[Message]:
    """Inverse of `message_attributes`: rebuild the messages stored under `prefix`."""
    out: list[Message] = []
    i = 0
    while f"{prefix}.{i}.message.role" in attributes:
        base = f"{prefix}.{i}.message"
        calls = []
        j = 0
        while f"{base}.tool_calls.{j}.tool_call.function.name" in attributes:
            cb = f"{base}.tool_calls.{j}.tool_call"
            calls.append(ToolCall(
                name=attributes[f"{cb}.function.name"],
                arguments=json.loads(attributes.get(f"{cb}.function.arguments") or "{}"),
                id=attributes.get(f"{cb}.id", ""),
            ))
            j += 1
        out.append(Message(
            role=attributes[f"{base}.role"],
            content=attributes.get(f"{base}.content", ""),
            tool_calls=tuple(calls),
            tool_call_id=attributes.get(f"{base}.tool_call_id"),
            name=attributes.get(f"{base}.name"),
        ))
        i += 1
    return out


def messages_to_json(messages: Sequence[Message]) -> str:
    return dumps([m.to_openai() for m in messages])


def messages_from_json(text: str) -> list[Message]:
    return [Message.from_openai(m) for m in json.loads(text)]

"""Export stored traces: OpenAI-format conversations (JSONL) or OTLP JSON.

Conversations are what fine-tuning and `evaluate()` read: one line per trajectory,
`{"messages": [...], "reward": ..., "reward_parts": {...}, "trace_id": ...}`.
OTLP JSON is the file form of the OTLP protocol (what an OTel collector's file
receiver or Phoenix's importer read). Stored rows are turned back into SDK spans and
encoded by the OTel exporter's own encoder, so the output is what a live OTLP export
would have sent; only the ids are rewritten as hex, as the OTLP/JSON spec requires.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags

from tracerl.trace.replay import load_trajectory
from tracerl.trace.store import SpanRecord, TraceStore


def conversation_record(store: TraceStore, trace_id: str) -> dict[str, Any]:
    traj = load_trajectory(store, trace_id)
    return {
        "messages": [m.to_openai() for m in traj.messages()],
        "answer": traj.task.answer,
        "reward": traj.outcome_reward,
        "reward_parts": traj.reward_parts,
        "status": traj.status.value,
        "task_id": traj.task.id,
        "trace_id": trace_id,
    }


def write_conversations(store: TraceStore, trace_ids: Iterable[str], out: TextIO) -> int:
    """One JSON line per trajectory; returns the number written."""
    n = 0
    for trace_id in trace_ids:
        out.write(json.dumps(conversation_record(store, trace_id), ensure_ascii=False) + "\n")
        n += 1
    return n


def _context(trace_id: str, span_id: str) -> SpanContext:
    return SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=False,
                       trace_flags=TraceFlags(TraceFlags.SAMPLED))


def readable_span(record: SpanRecord) -> ReadableSpan:
    """A stored span as the SDK span it was exported from."""
    attrs = {k: tuple(v) if isinstance(v, list) else v for k, v in record.attributes.items()}
    events = [Event(e["name"], e.get("attributes") or {}, e.get("timestamp"))
              for e in record.events]
    parent = _context(record.trace_id, record.parent_id) if record.parent_id else None
    return ReadableSpan(
        name=record.name, context=_context(record.trace_id, record.span_id), parent=parent,
        resource=Resource(record.resource), attributes=attrs, events=events,
        status=Status(StatusCode[record.status_code], record.status_message or None),
        start_time=record.start_ns, end_time=record.end_ns,
        instrumentation_scope=InstrumentationScope(record.scope or "tracerl"),
    )


def _hex_ids(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId")
                    else _hex_ids(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def otlp_json(spans: Sequence[SpanRecord]) -> dict[str, Any]:
    """An OTLP/JSON `ExportTraceServiceRequest` holding `spans`."""
    request = encode_spans([readable_span(s) for s in spans])
    return _hex_ids(MessageToDict(request))


def write_otlp_json(store: TraceStore, trace_ids: Iterable[str], out: TextIO) -> int:
    """One OTLP/JSON request per line (one per trace); returns the number of spans."""
    n = 0
    for trace_id in trace_ids:
        spans = store.spans(trace_id)
        out.write(json.dumps(otlp_json(spans)) + "\n")
        n += len(spans)
    return n

"""An OpenTelemetry SpanExporter that writes finished spans into the SQLite store.

It is a real `SpanExporter`, so it sits behind the SDK's BatchSpanProcessor like any
other exporter: spans are queued on the hot path and written by the processor's
worker thread, one transaction per batch.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from tracerl.trace import conventions as c
from tracerl.trace.store import connect

_SPAN_SQL = ("INSERT OR REPLACE INTO spans VALUES "
             "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
_TRAJ_SQL = "INSERT OR REPLACE INTO trajectories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_TOOL_SQL = "INSERT OR REPLACE INTO tool_calls VALUES (?, ?, ?, ?)"


def _hex(value: int, width: int) -> str:
    return format(value, f"0{width}x")


def _jsonable(attributes: Any) -> dict[str, Any]:
    if not attributes:
        return {}
    return {k: list(v) if type(v) is tuple else v for k, v in attributes.items()}


@functools.lru_cache(maxsize=16)
def _resource_json(resource: Resource) -> str:
    """Every span of a provider shares one Resource: serialise it once."""
    return json.dumps(_jsonable(resource.attributes))


def span_row(span: ReadableSpan) -> tuple[Any, ...]:
    ctx = span.get_span_context()
    assert ctx is not None, "SDK spans always carry a context"
    attrs = _jsonable(span.attributes)
    events = [{"name": e.name, "timestamp": e.timestamp, "attributes": _jsonable(e.attributes)}
              for e in span.events]
    return (
        _hex(ctx.span_id, 16), _hex(ctx.trace_id, 32),
        _hex(span.parent.span_id, 16) if span.parent else None,
        span.name, attrs.get(c.SPAN_KIND), attrs.get(c.SESSION_ID),
        span.start_time, span.end_time, span.status.status_code.name,
        span.status.description or "", json.dumps(attrs, default=str),
        json.dumps(events, default=str) if events else "[]", _resource_json(span.resource),
        span.instrumentation_scope.name if span.instrumentation_scope else "",
    )


def trajectory_row(span: ReadableSpan, row: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The `trajectories` index row of an AGENT span written by record_trajectory, or
    of the top-level span of instrumented agent code (Tracer.span gives it `rl.run`)."""
    attrs = span.attributes or {}
    if c.RL_RUN not in attrs or (attrs.get(c.SPAN_KIND) != c.AGENT and span.parent):
        return None
    status = attrs.get(c.RL_STATUS) or ("error" if row[8] == "ERROR" else "done")
    return (
        row[1], attrs[c.RL_RUN], attrs.get(c.RL_STEP, 0), attrs.get(c.RL_GROUP, 0),
        attrs.get(c.RL_SAMPLE, 0), attrs.get(c.RL_POLICY_VERSION, 0),
        status, attrs.get(c.RL_REWARD), attrs.get(c.RL_TASK_ID, ""),
        attrs.get(c.MODEL_NAME, ""), span.start_time, span.end_time,
    )


def tool_row(span: ReadableSpan, row: tuple[Any, ...]) -> tuple[Any, ...] | None:
    attrs = span.attributes or {}
    if attrs.get(c.SPAN_KIND) != c.TOOL or c.TOOL_NAME not in attrs:
        return None
    return (row[0], row[1], attrs[c.TOOL_NAME], int(bool(attrs.get(c.RL_TOOL_OK, True))))


class SQLiteSpanExporter(SpanExporter):
    """Write span batches to `path` (created with its schema if missing)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn: sqlite3.Connection | None = connect(self.path, check_same_thread=False)
        self._lock = threading.Lock()
        self.failures = 0
        """Batches that could not be written (counted, never raised into the caller)."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        span_rows = [span_row(s) for s in spans]
        traj_rows = [r for s, row in zip(spans, span_rows, strict=True)
                     if (r := trajectory_row(s, row)) is not None]
        tool_rows = [r for s, row in zip(spans, span_rows, strict=True)
                     if (r := tool_row(s, row)) is not None]
        with self._lock:
            if self._conn is None:
                return SpanExportResult.FAILURE
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(_SPAN_SQL, span_rows)
                self._conn.executemany(_TRAJ_SQL, traj_rows)
                self._conn.executemany(_TOOL_SQL, tool_rows)
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                self.failures += 1
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

"""The embedded trace store: one SQLite file (WAL) per run directory, `traces.sqlite`.

Spans land in `spans` (one row each, attributes as JSON). Two small index tables are
filled from the same spans as they arrive, so the questions asked most often are
plain indexed queries: `trajectories` (one row per AGENT span: run, step, group,
reward, status) and `tool_calls` (one row per TOOL span). Spans are indexed by kind too,
and tool calls by trace, for the viewer's filters (trace/query.py: "which trajectories
had a guard decision or a failed tool call" stays an index lookup over thousands of
trajectories). The indexes are created when a store is opened, so an older store gets
them the first time a reader or writer opens it. The writer is `SQLiteSpanExporter`
(sqlite_exporter.py); this module reads.

WAL lets readers (the CLI, evals, a viewer) open the file while training writes it, and
each exported batch is one transaction: a process killed mid-write loses at most the
batch in flight, never a committed one, and never corrupts the file.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS spans (
    span_id TEXT PRIMARY KEY, trace_id TEXT NOT NULL, parent_id TEXT,
    name TEXT NOT NULL, kind TEXT, session TEXT, start_ns INTEGER, end_ns INTEGER,
    status_code TEXT, status_message TEXT, attributes TEXT NOT NULL, events TEXT NOT NULL,
    resource TEXT NOT NULL, scope TEXT
);
CREATE INDEX IF NOT EXISTS spans_trace ON spans(trace_id);
CREATE INDEX IF NOT EXISTS spans_session ON spans(session);
CREATE INDEX IF NOT EXISTS spans_kind ON spans(kind, trace_id);
CREATE TABLE IF NOT EXISTS trajectories (
    trace_id TEXT PRIMARY KEY, run TEXT, step INTEGER, group_index INTEGER,
    sample_index INTEGER, policy_version INTEGER, status TEXT, reward REAL,
    task_id TEXT, model TEXT, start_ns INTEGER, end_ns INTEGER
);
CREATE INDEX IF NOT EXISTS trajectories_run ON trajectories(run, step);
CREATE TABLE IF NOT EXISTS tool_calls (
    span_id TEXT PRIMARY KEY, trace_id TEXT NOT NULL, tool_name TEXT NOT NULL, ok INTEGER
);
CREATE INDEX IF NOT EXISTS tool_calls_name ON tool_calls(tool_name, trace_id);
CREATE INDEX IF NOT EXISTS tool_calls_trace ON tool_calls(trace_id, ok);
"""

STORE_FILENAME = "traces.sqlite"


def resolve_store_path(path: str | Path) -> Path:
    """A run directory or a `.sqlite` file -> the store file."""
    p = Path(path)
    return p / STORE_FILENAME if p.is_dir() else p


def connect(path: str | Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """Open (creating if needed) a store with WAL on and the schema in place."""
    conn = sqlite3.connect(str(path), isolation_level=None,
                           check_same_thread=check_same_thread, timeout=30.0)
    conn.execute("PRAGMA journal_mode=WAL")
    # NORMAL in WAL mode is durable across application crashes (only an OS crash or
    # power loss can drop the last commits), and much faster than FULL.
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(SCHEMA)
    return conn


@dataclass(frozen=True)
class SpanRecord:
    """One stored span."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str | None
    start_ns: int
    end_ns: int
    status_code: str
    status_message: str
    attributes: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6


@dataclass(frozen=True)
class SpanNode:
    """A span with its children, in start-time order."""

    span: SpanRecord
    children: tuple[SpanNode, ...] = ()

    def walk(self) -> list[tuple[int, SpanRecord]]:
        """(depth, span) pairs, depth-first."""
        out = [(0, self.span)]
        for child in self.children:
            out.extend((d + 1, s) for d, s in child.walk())
        return out


@dataclass(frozen=True)
class TrajectorySummary:
    """One row of the `trajectories` index."""

    trace_id: str
    run: str
    step: int
    group_index: int
    sample_index: int
    policy_version: int
    status: str
    reward: float | None
    task_id: str
    model: str
    start_ns: int
    end_ns: int


@dataclass(frozen=True)
class RunSummary:
    run: str
    trajectories: int
    steps: int
    mean_reward: float | None
    errors: int


TRAJECTORY_COLUMNS = ("trace_id, run, step, group_index, sample_index, policy_version, "
                      "status, reward, task_id, model, start_ns, end_ns")
"""The `trajectories` index columns in TrajectorySummary's field order."""
_SPAN_COLUMNS = ("trace_id, span_id, parent_id, name, kind, start_ns, end_ns, status_code, "
                 "status_message, attributes, events, resource, scope")


def _span_from_row(row: tuple[Any, ...]) -> SpanRecord:
    return SpanRecord(
        trace_id=row[0], span_id=row[1], parent_id=row[2], name=row[3], kind=row[4],
        start_ns=row[5], end_ns=row[6], status_code=row[7], status_message=row[8],
        attributes=json.loads(row[9]), events=json.loads(row[10]),
        resource=json.loads(row[11]), scope=row[12] or "",
    )


class TraceStore:
    """Queries over a trace store file (read side; safe while a writer is running)."""

    def __init__(self, path: str | Path, *, check_same_thread: bool = True):
        """`check_same_thread=False` lets the connection move between threads (a server
        whose handlers run on one thread at a time, but not always the same one)."""
        self.path = resolve_store_path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"no trace store at {self.path}")
        self._conn = connect(self.path, check_same_thread=check_same_thread)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> TraceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def runs(self) -> list[RunSummary]:
        rows = self._conn.execute(
            "SELECT run, COUNT(*), COUNT(DISTINCT step), AVG(reward), "
            "SUM(status = 'error') FROM trajectories GROUP BY run ORDER BY MIN(start_ns)"
        ).fetchall()
        return [RunSummary(r[0], r[1], r[2], r[3], int(r[4] or 0)) for r in rows]

    def trajectories(
        self, *, run: str | None = None, step: int | None = None,
        status: str | None = None, tool: str | None = None,
        min_reward: float | None = None, max_reward: float | None = None,
        limit: int | None = None, latest_first: bool = False,
    ) -> list[TrajectorySummary]:
        """Trajectories matching every filter given, in (run, step, group, sample) order,
        or with `latest_first` the most recently started first (`limit` keeps the first
        ones of that order: the latest N with `latest_first`)."""
        where, params = [], []  # type: ignore[var-annotated]
        for clause, value in (("run = ?", run), ("step = ?", step), ("status = ?", status),
                              ("reward >= ?", min_reward), ("reward <= ?", max_reward)):
            if value is not None:
                where.append(clause)
                params.append(value)
        if tool is not None:
            where.append("trace_id IN (SELECT trace_id FROM tool_calls WHERE tool_name = ?)")
            params.append(tool)
        sql = f"SELECT {TRAJECTORY_COLUMNS} FROM trajectories"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += (" ORDER BY start_ns DESC, run DESC, group_index DESC, sample_index DESC"
                if latest_first
                else " ORDER BY run, step, group_index, sample_index, start_ns")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._conn.execute(sql, params).fetchall()
        return [TrajectorySummary(*r) for r in rows]

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query over the store's tables (query.py builds on this)."""
        return self._conn.execute(sql, tuple(params)).fetchall()

    def resolve_trace_id(self, prefix: str) -> str:
        """A full trace id from a unique prefix (as the CLI shows short ids)."""
        rows = self._conn.execute(
            "SELECT DISTINCT trace_id FROM spans WHERE trace_id LIKE ? LIMIT 2",
            (prefix.lower() + "%",),
        ).fetchall()
        if not rows:
            raise KeyError(f"no trace with id starting {prefix!r} in {self.path}")
        if len(rows) > 1:
            raise KeyError(f"trace id prefix {prefix!r} is ambiguous in {self.path}")
        return str(rows[0][0])

    def spans(self, trace_id: str) -> list[SpanRecord]:
        rows = self._conn.execute(
            f"SELECT {_SPAN_COLUMNS} FROM spans WHERE trace_id = ? ORDER BY start_ns, rowid",
            (trace_id,),
        ).fetchall()
        return [_span_from_row(r) for r in rows]

    def all_spans(self) -> list[SpanRecord]:
        rows = self._conn.execute(
            f"SELECT {_SPAN_COLUMNS} FROM spans ORDER BY trace_id, start_ns, rowid"
        ).fetchall()
        return [_span_from_row(r) for r in rows]

    def count_spans(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM spans").fetchone()[0])

    def tree(self, trace_id: str) -> SpanNode:
        """The span tree of one trace (its root is the span without a stored parent)."""
        spans = self.spans(trace_id)
        if not spans:
            raise KeyError(f"no spans for trace {trace_id}")
        return build_tree(spans)


def build_tree(spans: list[SpanRecord]) -> SpanNode:
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[SpanRecord]] = {}
    for s in spans:
        key = s.parent_id if s.parent_id in ids else None
        children.setdefault(key, []).append(s)
    roots = children.get(None, [])
    if len(roots) != 1:
        raise ValueError(f"trace has {len(roots)} root spans, expected 1")

    def node(s: SpanRecord) -> SpanNode:
        return SpanNode(s, tuple(node(k) for k in children.get(s.span_id, [])))

    return node(roots[0])

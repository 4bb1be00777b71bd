"""Pages of trajectories for a viewer: filters, text search, counts, newest step first.

    page = find_trajectories(store, TrajectoryFilter(run="calc", tool_errors=True), limit=50)

`TraceStore.trajectories` answers the CLI's simple questions; a dashboard over thousands
of trajectories needs more: an offset and a total for paging, filters on what happened
inside a trajectory (a failed tool call, a guard decision that acted, an unjudged
reward) and a text search over the conversation. Each is one query over the store's
tables; per-row counts are read for the page's rows only, so a page costs the same
whether the run holds a hundred trajectories or a hundred thousand.

Text search is a case-insensitive substring match (ASCII case only, as SQLite's LIKE)
over what was said: the task's messages, every action, every tool output and the env's
own observations. Those texts are a small part of the stored spans (which also hold token
ids and, on every LLM span, the whole conversation so far), so they are copied once into
a TEMP table of the reading connection (in memory, never into the store file) and
topped up from the spans added since, by rowid, before each search: a search reads a few
MB instead of the whole store, and a run still training is searched up to its last
span. Messages are kept as JSON, so the query is matched both as typed and
JSON-escaped (quotes, backslashes, non-ASCII text).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracerl.trace import conventions as c
from tracerl.trace.store import TRAJECTORY_COLUMNS, TraceStore, TrajectorySummary

STATUSES = ("done", "truncated", "error")

# A Guard decision worth showing: it flagged, redacted or blocked, or a scanner failed
# (the same test as `_acted` in transcript.py, in SQL).
_GUARD_ACTED = (
    f"kind = '{c.GUARDRAIL}' AND (json_extract(attributes, '$.\"{c.GUARDRAIL_ACTION}\"') "
    f"!= 'off' OR json_extract(attributes, '$.\"{c.GUARDRAIL_ERRORS}\"') IS NOT NULL)"
)


@dataclass(frozen=True)
class TrajectoryFilter:
    """Which trajectories a page lists; every field left at None (or "") matches all."""

    run: str | None = None
    """The `rl.run` label: a run's name (training) or `<name>:eval` (evaluations)."""
    step: int | None = None
    status: str | None = None
    """done, truncated or error."""
    min_reward: float | None = None
    max_reward: float | None = None
    tool_errors: bool | None = None
    """True: only those with a failed tool call; False: only those without."""
    guard: bool | None = None
    """True: only those where a Guard decision acted (flag, redact, block, scanner error)."""
    unjudged: bool | None = None
    """True: only those whose outcome reward could not be judged (stored as null)."""
    task_id: str | None = None
    text: str = ""
    """Substring of the conversation or a tool output (see the module docstring)."""

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {self.status!r}")


@dataclass(frozen=True)
class TrajectoryRow:
    """One listed trajectory: its index row and what happened inside it."""

    summary: TrajectorySummary
    tool_calls: int
    tool_errors: int
    guard_decisions: int
    """Guard decisions that acted (see TrajectoryFilter.guard)."""


@dataclass(frozen=True)
class TrajectoryPage:
    rows: tuple[TrajectoryRow, ...]
    total: int
    """How many trajectories match the filter (all pages)."""
    offset: int
    limit: int


_SEARCH_TABLE = "temp.trace_text"
_SEARCH_FIELDS = (c.OUTPUT_VALUE, c.RL_TASK_MESSAGES, c.RL_OBSERVATIONS)


def refresh_text_index(store: TraceStore) -> None:
    """Copy the searchable text of spans added since the last call into the TEMP table."""
    body = " || ' ' || ".join(f"coalesce(json_extract(attributes, '$.\"{f}\"'), '')"
                              for f in _SEARCH_FIELDS)
    store.read(f"CREATE TABLE IF NOT EXISTS {_SEARCH_TABLE} "
               "(span_rowid INTEGER PRIMARY KEY, trace_id TEXT NOT NULL, body TEXT NOT NULL)")
    store.read(
        f"INSERT INTO {_SEARCH_TABLE} SELECT rowid, trace_id, {body} FROM spans "
        f"WHERE rowid > (SELECT coalesce(max(span_rowid), 0) FROM {_SEARCH_TABLE}) "
        f"AND kind IN ('{c.AGENT}', '{c.LLM}', '{c.TOOL}')")


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _where(f: TrajectoryFilter) -> tuple[str, list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    for clause, value in (("run = ?", f.run), ("step = ?", f.step), ("status = ?", f.status),
                          ("reward >= ?", f.min_reward), ("reward <= ?", f.max_reward),
                          ("task_id = ?", f.task_id)):
        if value is not None:
            where.append(clause)
            params.append(value)
    inside = {
        "tool_errors": (f.tool_errors, "SELECT trace_id FROM tool_calls WHERE ok = 0"),
        "guard": (f.guard, f"SELECT trace_id FROM spans WHERE {_GUARD_ACTED}"),
    }
    for wanted, subquery in inside.values():
        if wanted is not None:
            where.append(f"trace_id {'IN' if wanted else 'NOT IN'} ({subquery})")
    if f.unjudged is not None:
        where.append("reward IS NULL" if f.unjudged else "reward IS NOT NULL")
    if f.text:
        patterns = {_like(f.text), _like(json.dumps(f.text)[1:-1])}
        likes = " OR ".join("body LIKE ? ESCAPE '\\'" for _ in patterns)
        where.append(f"trace_id IN (SELECT trace_id FROM {_SEARCH_TABLE} WHERE {likes})")
        params.extend(sorted(patterns))
    return (" WHERE " + " AND ".join(where)) if where else "", params


def _counts(store: TraceStore, trace_ids: Sequence[str], sql: str) -> dict[str, int]:
    if not trace_ids:
        return {}
    marks = ", ".join("?" * len(trace_ids))
    return dict(store.read(sql.format(ids=marks), trace_ids))  # type: ignore[arg-type]


def find_trajectories(store: TraceStore, where: TrajectoryFilter = TrajectoryFilter(),
                      offset: int = 0, limit: int = 50) -> TrajectoryPage:
    """One page of the trajectories matching `where`, newest step first (then group and
    sample), with the total count and each row's tool and guard counts."""
    if offset < 0 or limit < 1:
        raise ValueError(f"offset must be >= 0 and limit >= 1, got {offset} and {limit}")
    if where.text:
        refresh_text_index(store)
    clause, params = _where(where)
    total = store.read(f"SELECT COUNT(*) FROM trajectories{clause}", params)[0][0]
    rows = store.read(
        f"SELECT {TRAJECTORY_COLUMNS} FROM trajectories{clause} "
        "ORDER BY step DESC, run, group_index, sample_index, start_ns LIMIT ? OFFSET ?",
        [*params, limit, offset])
    ids = [r[0] for r in rows]
    calls = _counts(store, ids, "SELECT trace_id, COUNT(*) FROM tool_calls "
                                "WHERE trace_id IN ({ids}) GROUP BY trace_id")
    failed = _counts(store, ids, "SELECT trace_id, COUNT(*) FROM tool_calls "
                                 "WHERE ok = 0 AND trace_id IN ({ids}) GROUP BY trace_id")
    guarded = _counts(store, ids, "SELECT trace_id, COUNT(*) FROM spans "
                                  f"WHERE trace_id IN ({{ids}}) AND {_GUARD_ACTED} "
                                  "GROUP BY trace_id")
    return TrajectoryPage(
        tuple(TrajectoryRow(TrajectorySummary(*r), calls.get(r[0], 0), failed.get(r[0], 0),
                            guarded.get(r[0], 0)) for r in rows),
        int(total), offset, limit)


def steps(store: TraceStore, run: str) -> list[int]:
    """The steps at which `run` recorded trajectories, ascending."""
    return [r[0] for r in store.read(
        "SELECT DISTINCT step FROM trajectories WHERE run = ? ORDER BY step", [run])]

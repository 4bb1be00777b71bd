"""Pages of trajectories: filters on what happened inside them, text search, paging."""

from __future__ import annotations

import pytest

from tracerl.guard import Guard
from tracerl.trace import Tracer, TraceStore
from tracerl.trace.query import TrajectoryFilter, find_trajectories, steps
from tracerl.trace.records import GuardrailRecord
from tracerl.types import Message, Status


@pytest.fixture
def store(tmp_path, build_trajectory) -> TraceStore:
    """Six trajectories over steps 1-3: one unjudged, one truncated, one guarded, three
    with a failed tool call, one whose tool output holds a quoted, non-ASCII phrase."""
    decision = Guard().check_observation("write to john.smith@gmail.com")  # PII: redacted
    with Tracer(tmp_path / "t.sqlite") as tracer:
        for k in range(6):
            traj = build_trajectory(reward=None if k == 1 else k / 5, sample=k,
                                    status=Status.TRUNCATED if k == 2 else Status.DONE,
                                    broken_tool=k % 2 == 0)
            if k == 5:
                traj.turns[0].observations = [Message("tool", 'say "héllo" 100%')]
                traj.turns[0].tool_results[0].content = 'say "héllo" 100%'
            tracer.record_trajectory(traj, run="exp", step=1 + k // 2,
                                     guardrails=[GuardrailRecord(decision, 0)] if k == 3 else ())
        tracer.record_trajectory(build_trajectory(), run="exp:eval", step=0)
    return TraceStore(tmp_path / "t.sqlite")


def _samples(store: TraceStore, **kw) -> list[int]:
    return [r.summary.sample_index
            for r in find_trajectories(store, TrajectoryFilter(run="exp", **kw)).rows]


def test_newest_step_first_then_group_and_sample(store):
    assert _samples(store) == [4, 5, 2, 3, 0, 1]


def test_filters_on_what_happened_inside(store):
    assert _samples(store, tool_errors=True) == [4, 2, 0]
    assert _samples(store, tool_errors=False) == [5, 3, 1]
    assert _samples(store, guard=True) == [3]
    assert _samples(store, unjudged=True) == [1]
    assert _samples(store, status="truncated") == [2]
    assert _samples(store, step=2, min_reward=0.5) == [3]


def test_rows_count_tool_calls_failures_and_guard_decisions(store):
    rows = {r.summary.sample_index: r for r in find_trajectories(store).rows}
    assert (rows[0].tool_calls, rows[0].tool_errors, rows[0].guard_decisions) == (2, 1, 0)
    assert (rows[3].tool_calls, rows[3].tool_errors, rows[3].guard_decisions) == (1, 0, 1)


def test_text_search_matches_tool_output_quoted_and_non_ascii(store):
    assert _samples(store, text='"HÉLLO"') == []  # LIKE folds ASCII case only
    assert _samples(store, text='"héllo" 100%') == [5]
    assert _samples(store, text="HéLLo") == [5]
    assert _samples(store, text="100_") == []  # wildcards are literal


def test_pages_carry_the_total(store):
    page = find_trajectories(store, TrajectoryFilter(run="exp"), offset=4, limit=4)
    assert (page.total, len(page.rows), page.rows[0].summary.sample_index) == (6, 2, 0)
    assert steps(store, "exp") == [1, 2, 3] and steps(store, "exp:eval") == [0]


def test_bad_status_and_paging_are_errors(store):
    with pytest.raises(ValueError, match="status must be one of"):
        TrajectoryFilter(status="finished")
    with pytest.raises(ValueError, match="limit"):
        find_trajectories(store, limit=0)


def test_text_search_sees_trajectories_recorded_after_the_first_search(store, build_trajectory):
    assert _samples(store, text="fresh words") == []
    traj = build_trajectory(sample=9)
    traj.turns[-1].action_text = "some fresh words"
    with Tracer(store.path) as tracer:
        tracer.record_trajectory(traj, run="exp", step=4)
    assert _samples(store, text="FRESH words") == [9]

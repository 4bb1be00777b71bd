"""evaluate(): sources (trajectories, JSONL, trace store), aggregates, contained failures."""

from __future__ import annotations

import json

import pytest

from tracerl.evals import EvalReport, ExactMatch, Latency, NumericMatch, ToolSelection, evaluate
from tracerl.evals.items import EvalItem
from tracerl.trace import Tracer
from tracerl.types import Trajectory


@pytest.fixture
def trajs(make_trajectory) -> list[Trajectory]:
    """Two one-turn trajectories for the answer 42: one right, one wrong."""
    return [make_trajectory(("42", []), answer="42", task_id="a"),
            make_trajectory(("41", []), answer="42", task_id="b")]


class Exploding:
    name = "exploding"

    def __call__(self, item: EvalItem) -> float:
        if item.trajectory.task.id == "b":
            raise RuntimeError("boom")
        return 0.25


def test_aggregates_over_trajectories(trajs):
    report = evaluate([ExactMatch()], trajs)
    agg = report.aggregates["exact_match"]
    assert (agg.mean, agg.pass_rate, agg.scored, agg.failed) == (0.5, 0.5, 2, 0)
    assert [r.scores["exact_match"] for r in report.items] == [1.0, 0.0]


def test_raising_metric_is_a_counted_failure_not_a_crash(trajs):
    report = evaluate([Exploding(), ExactMatch()], trajs)
    assert [(f.item_id, f.metric, f.error) for f in report.failures] == [
        ("b/g0/s0", "exploding", "RuntimeError: boom")]
    assert report.aggregates["exploding"].failed == 1
    assert report.aggregates["exploding"].mean == 0.25
    assert report.items[1].scores["exact_match"] == 0.0


def test_none_scores_count_as_unjudged(trajs):
    agg = evaluate([Latency()], trajs).aggregates["latency_s"]
    assert (agg.mean, agg.unjudged, agg.scored) == (None, 2, 0)


def test_jsonl_conversations_with_reference_fields(tmp_path):
    path = tmp_path / "c.jsonl"
    lines = [
        {"id": "x", "answer": "7", "messages": [
            {"role": "user", "content": "3+4?"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "type": "function",
             "function": {"name": "calc", "arguments": "{\"e\": \"3+4\"}"}}]},
            {"role": "tool", "content": "7", "tool_call_id": "1"},
            {"role": "assistant", "content": "It is 7."}]},
        {"id": "y", "answer": "9", "messages": [{"role": "user", "content": "?"},
                                                {"role": "assistant", "content": "8"}]},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    report = evaluate([NumericMatch(), ToolSelection(required=("calc",))], path)
    assert [r.id for r in report.items] == ["x", "y"]
    assert [r.scores["numeric_match"] for r in report.items] == [1.0, 0.0]
    assert [r.passed["tool_selection"] for r in report.items] == [True, False]


def test_jsonl_bad_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"messages": []}\n{"nope": 1}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: expected an object with a 'messages'"):
        evaluate([ExactMatch()], path)


def test_trace_store_source(tmp_path, trajs):
    with Tracer.for_run(tmp_path) as tracer:
        for traj in trajs:
            tracer.record_trajectory(traj, run="r")
    report = evaluate([ExactMatch()], tmp_path, run="r")
    assert sorted(r.scores["exact_match"] for r in report.items) == [0.0, 1.0]
    assert all(len(r.id) == 32 for r in report.items)  # trace ids


def test_report_table_and_json(trajs):
    report = evaluate([ExactMatch(), Exploding()], trajs)
    table = report.table()
    assert table.splitlines()[0].split()[:2] == ["metric", "mean"]
    assert "1 failures" in table
    assert json.loads(json.dumps(report.to_dict()))["aggregates"]["exact_match"]["mean"] == 0.5


def test_duplicate_metric_names_are_rejected(trajs):
    with pytest.raises(ValueError, match="repeated: \\['exact_match'\\]"):
        evaluate([ExactMatch(), ExactMatch()], trajs)


def test_non_metric_is_rejected(trajs):
    with pytest.raises(TypeError, match="is not a Metric"):
        evaluate([lambda item: 1.0], trajs)  # type: ignore[list-item]


def test_unknown_data_path_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="expected a .jsonl file"):
        evaluate([ExactMatch()], tmp_path / "x.csv")


def _tagged(make_trajectory, task_id: str, text: str, tags: object) -> Trajectory:
    traj = make_trajectory((text, []), answer="42", task_id=task_id)
    traj.task.metadata["tags"] = tags
    return traj


def test_breakdown_by_task_and_by_tag(make_trajectory):
    trajs = [_tagged(make_trajectory, "a", "42", ["easy", "math"]),
             _tagged(make_trajectory, "a", "41", ["math"]),
             _tagged(make_trajectory, "b", "42", "easy")]
    for i, t in enumerate(trajs):
        t.sample_index = i
    report = evaluate([ExactMatch()], trajs)
    by_task = report.by("task")
    assert by_task["a"]["exact_match"].mean == 0.5 and by_task["b"]["exact_match"].mean == 1.0
    by_tag = report.by("tag")
    assert (by_tag["easy"]["exact_match"].scored, by_tag["easy"]["exact_match"].mean) == (2, 1.0)
    assert by_tag["math"]["exact_match"].mean == 0.5
    table = report.table(by="tag")
    assert table.splitlines()[0].split()[:2] == ["tag", "metric"] and "math" in table
    with pytest.raises(ValueError, match="group by one of"):
        report.by("colour")  # type: ignore[arg-type]


def test_bad_tags_are_named(make_trajectory):
    with pytest.raises(ValueError, match="'tags' must be a string or a list of strings"):
        evaluate([ExactMatch()], [_tagged(make_trajectory, "a", "42", {"x": 1})])


def test_unjudged_items_are_counted_by_reason(make_trajectory):
    trajs = [make_trajectory(("42", []), answer="42", task_id="a"),
             make_trajectory(("42", []), answer=None, task_id="b"),
             make_trajectory(("42", []), answer="  ", task_id="c")]
    agg = evaluate([ExactMatch()], trajs).aggregates["exact_match"]
    assert (agg.scored, agg.unjudged, agg.failed) == (1, 2, 0)
    assert agg.unjudged_reasons == {
        "reference field 'answer' is null": 1,
        "reference field 'answer' is not a non-empty text or number": 1}
    assert "unjudged (the data could not judge" in evaluate([ExactMatch()], trajs).table()


def test_report_round_trips_through_json(trajs):
    report = evaluate([ExactMatch(), Exploding()], trajs)
    again = EvalReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report
    with pytest.raises(ValueError, match="not an evaluate\\(\\) report"):
        EvalReport.from_dict({"items": []})


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_evaluate_restores_the_collector_and_still_collects_cyclic_garbage():
    """evaluate() freezes older objects while scoring (evaluate._ScoringHeap): after it
    nothing is left frozen, a caller's freeze and a disabled collector are left as they
    were, and reference cycles a metric makes are collected chunk by chunk."""
    import gc
    import weakref

    from tracerl.evals.evaluate import _ScoringHeap
    from tracerl.evals.items import item_from_text

    made: list[weakref.ref] = []

    class MakesCycles:
        name = "cycles"

        def __call__(self, item):  # noqa: ANN001, ANN204
            made.append(weakref.ref(_Cycle()))
            return 1.0

    items = [item_from_text("x", f"i{i}") for i in range(_ScoringHeap.CHUNK + 10)]
    assert gc.get_freeze_count() == 0
    report = evaluate([MakesCycles()], items)
    assert report.aggregates["cycles"].scored == len(items)
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    assert all(r() is None for r in made[: _ScoringHeap.CHUNK])  # collected while scoring
    gc.freeze()  # a caller's own freeze is theirs
    try:
        frozen = gc.get_freeze_count()
        evaluate([MakesCycles()], items[:3])
        # neither unfrozen (0) nor frozen again (every tracked object); a frozen object
        # another thread frees while this runs leaves the permanent generation, so the
        # count may drop by a few
        assert abs(gc.get_freeze_count() - frozen) < max(100, frozen // 100)
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        evaluate([MakesCycles()], items[:3])
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()

"""Tool-use metrics on known trajectories."""

from __future__ import annotations

import pytest

from tracerl.evals.items import EvalItem
from tracerl.evals.metrics import (
    LoopDetection,
    StepEfficiency,
    ToolCallValidity,
    ToolSelection,
    TrajectoryMatch,
)
from tracerl.evals.metrics.tools import find_loop

SCHEMAS = [{"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "required": ["a", "b"],
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}}}]


def test_tool_selection_counts_constraints_met(call, item):
    it = item(calls=[call("search"), call("rm")])
    result = ToolSelection(required=("search", "fetch"), forbidden=("rm",))(it)
    assert (result.score, result.passed) == (pytest.approx(1 / 3), False)
    assert result.details == {"missing": ["fetch"], "forbidden_used": ["rm"]}


def test_tool_selection_passes_when_all_met(call, item):
    assert ToolSelection(required=("search",), forbidden=("rm",))(
        item(calls=[call("search")])).passed


def test_tool_call_validity_against_schema(call, item):
    it = item(calls=[call("add", a=1, b=2), call("add", a=1), call("mul", a=1)])
    result = ToolCallValidity(SCHEMAS)(it)
    assert result.score == pytest.approx(1 / 3)
    assert result.details["invalid"][1] == "unknown tool 'mul'"
    assert result.details["invalid"][0] == "add: 'b' is a required property"


def test_tool_call_validity_without_calls_is_vacuous(item):
    result = ToolCallValidity({"add": {"type": "object"}})(item("just text"))
    assert (result.score, result.details["vacuous"]) == (1.0, True)


def test_step_efficiency_counts_identical_repeats(call, item):
    it = item(calls=[call("s", q=1), call("s", q=1), call("s", q=2), call("s", q=1)])
    result = StepEfficiency()(it)
    assert (result.score, result.details["redundant"]) == (0.5, 2)


def test_find_loop_period_two():
    assert find_loop(list("xababab"), min_repeats=3, max_period=4) == (1, 2, 3)


def test_find_loop_none():
    assert find_loop(list("abcabd"), min_repeats=2, max_period=3) == (-1, 0, 0)


def test_loop_detection_on_repeated_tool_turns(call, make_trajectory):
    turns = [("", [call("look", at="door")])] * 3 + [("done", [])]
    it = EvalItem("l", make_trajectory(*turns))
    assert LoopDetection()(it).score == 0.0


def test_loop_detection_passes_varied_turns(call, make_trajectory):
    turns = [("", [call("look", at=str(i))]) for i in range(5)]
    assert LoopDetection()(EvalItem("l", make_trajectory(*turns))).passed


def test_trajectory_match_metric_reads_reference_messages(call, item):
    ref = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "1", "type": "function", "function": {"name": "s", "arguments": "{\"q\": 1}"}}]}]
    it = item(calls=[call("s", q=1), call("x")], reference_messages=ref)
    assert TrajectoryMatch(mode="superset")(it).passed
    assert TrajectoryMatch(mode="unordered", score="f1")(it).score == pytest.approx(2 / 3)

"""The span tree record_trajectory emits: kinds, nesting, times and attributes."""

from __future__ import annotations

import json

import pytest

from tracerl.trace import (
    EvaluationRecord,
    GuardFinding,
    GuardrailRecord,
    SpanRecord,
    Tracer,
    TraceStore,
)
from tracerl.types import Status


def _record(tmp_path, traj, **kwargs) -> list[SpanRecord]:
    with Tracer(tmp_path / "t.sqlite") as tracer:
        trace_id = tracer.record_trajectory(traj, run="exp", step=4, model_name="tiny", **kwargs)
    with TraceStore(tmp_path / "t.sqlite") as store:
        return store.spans(trace_id)


@pytest.fixture
def spans(tmp_path, trajectory) -> list[SpanRecord]:
    return _record(tmp_path, trajectory)


def _kind(spans, kind):
    return [s for s in spans if s.kind == kind]


def test_one_agent_span_parents_every_other_span(spans):
    (root,) = _kind(spans, "AGENT")
    assert all(s.parent_id == root.span_id for s in spans if s is not root)


def test_span_kinds_per_turn_call_and_reward_part(spans):
    kinds = sorted(s.kind for s in spans)
    assert kinds == sorted(["AGENT", "LLM", "LLM", "TOOL", "TOOL", "EVALUATOR", "EVALUATOR"])


def test_spans_carry_recorded_wall_clock_times(spans, t0):
    (root,) = _kind(spans, "AGENT")
    turn1 = next(s for s in spans if s.name == "turn 1")
    assert (root.start_ns, root.end_ns) == (int(t0 * 1e9), int((t0 + 0.6) * 1e9))
    assert turn1.start_ns == int((t0 + 0.4) * 1e9)


def test_agent_span_has_rl_attributes(spans):
    a = _kind(spans, "AGENT")[0].attributes
    assert (a["rl.run"], a["session.id"], a["rl.step"]) == ("exp", "exp", 4)
    assert (a["rl.group"], a["rl.sample"], a["rl.policy_version"]) == (0, 0, 3)
    assert (a["rl.status"], a["rl.reward"], a["rl.reward.correct"]) == ("done", 1.0, 1.0)
    assert "rl.reward.format" not in a  # unjudged parts are not scored 0
    assert a["rl.advantage.mean"] == pytest.approx(0.5 * 3 / 7 - 1.0 / 7)


def test_llm_span_has_messages_and_token_counts(spans):
    a = next(s for s in spans if s.name == "turn 1").attributes
    assert a["llm.input_messages.0.message.role"] == "system"
    assert a["llm.input_messages.3.message.role"] == "tool"
    assert a["llm.output_messages.0.message.content"] == "The answer is 42."
    prompt = 4 + 3 + 2  # prompt ids, turn 0 action ids, turn 0 observation ids
    assert (a["llm.token_count.prompt"], a["llm.token_count.completion"]) == (prompt, 2)
    assert a["llm.token_count.total"] == prompt + 2
    assert a["llm.model_name"] == "tiny"


def test_llm_span_lists_tool_calls_of_the_turn(spans):
    a = next(s for s in spans if s.name == "turn 0").attributes
    base = "llm.output_messages.0.message.tool_calls"
    assert a[f"{base}.1.tool_call.function.name"] == "lookup"
    assert json.loads(a[f"{base}.0.tool_call.function.arguments"]) == {"expr": "6*7"}


def test_tool_span_attributes(spans):
    a = next(s for s in spans if s.name == "calculator").attributes
    assert (a["tool.name"], json.loads(a["tool.parameters"])) == ("calculator", {"expr": "6*7"})
    assert (a["output.value"], a["rl.turn.index"]) == ("42", 0)


def test_failed_tool_span_has_error_status(spans):
    lookup = next(s for s in spans if s.name == "lookup")
    assert (lookup.status_code, lookup.status_message) == ("ERROR", "tool_raised")


def test_evaluator_span_per_reward_part(spans):
    ev = {s.attributes["evaluation.name"]: s.attributes for s in _kind(spans, "EVALUATOR")}
    assert ev["correct"]["evaluation.score"] == 1.0
    assert "evaluation.score" not in ev["format"] and ev["format"]["evaluation.label"] == "unjudged"


def test_guardrail_span_per_scan(tmp_path, trajectory):
    scan = GuardrailRecord(("secrets", "pii"), "block", (GuardFinding("secrets", "api_key"),),
                           turn_index=1, text="sk-123")
    (g,) = _kind(_record(tmp_path, trajectory, guardrails=[scan]), "GUARDRAIL")
    assert g.attributes["rl.guard.scanners"] == ["secrets", "pii"]
    assert json.loads(g.attributes["rl.guard.findings"])[0]["category"] == "api_key"
    assert g.status_code == "ERROR"


def test_guardrail_record_rejects_unknown_action():
    with pytest.raises(ValueError, match="action must be one of"):
        GuardrailRecord(("pii",), "explode")


def test_error_trajectory_marks_agent_span_error(tmp_path, build_trajectory):
    spans = _record(tmp_path, build_trajectory(reward=None, status=Status.ERROR))
    root = _kind(spans, "AGENT")[0]
    assert (root.status_code, root.status_message) == ("ERROR", "sandbox down")


def test_untimed_trajectory_gets_current_times(tmp_path, t0, build_trajectory):
    traj = build_trajectory()
    for turn in traj.turns:
        turn.started_at = turn.ended_at = 0.0
    root = _kind(_record(tmp_path, traj), "AGENT")[0]
    assert root.start_ns > int(t0 * 1e9) + 10**15


def test_record_failure_is_counted_not_raised(tmp_path, trajectory):
    trajectory.turns[0].info["bad"] = object()  # serialised with str(); still records
    trajectory.reward_parts = {"x": "not a number"}  # type: ignore[dict-item]
    with Tracer(tmp_path / "t.sqlite") as tracer:
        assert tracer.record_trajectory(trajectory, run="exp") is None
        assert tracer.failures == 1


def test_extra_evaluations_become_evaluator_spans(tmp_path, trajectory):
    judge = EvaluationRecord("rubric", 0.7, label="good", explanation="clear steps")
    spans = _record(tmp_path, trajectory, evaluations=[judge])
    a = next(s for s in spans if s.name == "rubric").attributes
    assert (a["evaluation.score"], a["evaluation.label"]) == (0.7, "good")
    assert a["evaluation.explanation"] == "clear steps"


def test_guardrail_record_from_dict():
    record = GuardrailRecord.from_dict({
        "scanners": ["pii"], "action": "redact", "turn_index": 0,
        "findings": [{"scanner": "pii", "category": "email", "score": "0.9"}]})
    assert record.findings == (GuardFinding("pii", "email", "", 0.9),)

"""The span tree record_trajectory emits: kinds, nesting, times and attributes."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tracerl.guard import Action, Guard
from tracerl.trace import (
    EvaluationRecord,
    GuardrailRecord,
    SpanRecord,
    Tracer,
    TraceStore,
)
from tracerl.trace import conventions as c
from tracerl.trace.records import guardrail_records
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


def test_guardrail_span_per_guard_decision(tmp_path, trajectory, t0):
    decision = Guard().check_tool_call("bash", {"command": "rm -rf /"})
    record = GuardrailRecord(decision, turn_index=1, started_at=t0 + 0.5, ended_at=t0 + 0.51)
    (g,) = _kind(_record(tmp_path, trajectory, guardrails=[record]), "GUARDRAIL")
    a = g.attributes
    assert (a["guardrail.target"], a["guardrail.action"], a["guardrail.blocked"]) == (
        "tool_call", "block", True)
    assert (a["tool.name"], a["rl.turn.index"], a["session.id"]) == ("bash", 1, "exp")
    assert a["guardrail.scanners"] == list(decision.scanners)
    assert a["guardrail.penalty"] == 1.0 and a["guardrail.latency_ms"] > 0
    (finding,) = json.loads(a["guardrail.findings"])
    assert finding == {"scanner": "code_injection", "kind": "destructive_command",
                       "score": decision.findings[0].score, "action": "block",
                       "location": "arguments.command"}
    assert a["output.value"] == decision.reason
    assert (g.status_code, g.status_message) == ("ERROR", "blocked by guard")


def test_guardrail_attribute_names_are_the_conventions_ones(tmp_path, trajectory):
    decision = Guard().check_observation("all good")
    (g,) = _kind(_record(tmp_path, trajectory, guardrails=[GuardrailRecord(decision)]),
                 "GUARDRAIL")
    names = {v for k, v in vars(c).items() if k.startswith("GUARDRAIL_")}
    ours = {k for k in g.attributes if k.startswith("guardrail.")}
    assert ours and ours <= names
    assert not any(k.startswith("rl.guard") for k in g.attributes)


def test_guardrail_action_uses_the_guard_vocabulary(tmp_path, trajectory):
    guard = Guard()
    decisions = [guard.check_observation("all good"),  # nothing triggered: "off"
                 guard.check_observation("mail maria@gmail.com"),  # redact
                 guard.check_tool_call("bash", {"command": "rm -rf /"})]  # block
    records = [GuardrailRecord(d) for d in decisions]
    spans = _kind(_record(tmp_path, trajectory, guardrails=records), "GUARDRAIL")
    actions = sorted(s.attributes["guardrail.action"] for s in spans)
    assert actions == ["block", "off", "redact"]
    assert set(actions) <= {a.value for a in Action}


def test_guardrail_span_never_contains_the_secret(tmp_path, trajectory):
    secret = "AKIA2E0A8F3B244C9986"
    guard = Guard()
    decisions = [guard.check_tool_call("http", {"header": f"X-Key: {secret}"}),
                 guard.check_observation(f"key={secret}")]
    assert all(d.triggered for d in decisions)
    spans = _kind(_record(tmp_path, trajectory, guardrails=[GuardrailRecord(d) for d in decisions]),
                  "GUARDRAIL")
    assert len(spans) == 2 and secret not in repr([s.attributes for s in spans])


def test_guardrail_records_come_from_the_tool_results(trajectory):
    decision = Guard().check_tool_call("calculator", {"expr": "6*7"})
    result = trajectory.turns[0].tool_results[0]
    trajectory.turns[0].tool_results[0] = dataclasses.replace(result, guard=(decision,))
    (record,) = guardrail_records(trajectory)
    assert (record.decision, record.turn_index) == (decision, 0)
    assert (record.started_at, record.ended_at) == (result.started_at, result.ended_at)


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

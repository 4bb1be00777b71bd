"""Tool success, per-call argument credit, step budget and action safety, including
malformed calls (the policy's fault) and malformed reference calls (the data's)."""

from __future__ import annotations

import json

import pytest

from tracerl.evals.items import MALFORMED_CALL, EvalItem, item_from_record
from tracerl.evals.match import Call
from tracerl.evals.metric import score
from tracerl.evals.metrics import ActionSafety, StepBudget, ToolCallCredit, ToolSuccess
from tracerl.evals.metrics.agent import argument_credit
from tracerl.types import Message, ToolCall, ToolResult


def _record(*calls: tuple[str, str], results: tuple[str, ...] = (), **reference) -> EvalItem:
    """A conversation: one assistant turn making `calls` (name, raw JSON arguments), then
    tool messages with `results`, then a final answer."""
    msgs = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
                for i, (n, a) in enumerate(calls)]}]
    msgs += [{"role": "tool", "tool_call_id": f"c{i}", "content": r}
             for i, r in enumerate(results)]
    msgs.append({"role": "assistant", "content": "done"})
    return item_from_record({"id": "x", "messages": msgs, **reference}, "test")


def test_malformed_call_in_a_conversation_loads_as_a_nameless_call():
    it = _record(("search", '{"q": "a"}'), ("fetch", '{"id": '))
    calls = it.trajectory.turns[0].tool_calls
    assert [c.name for c in calls] == ["search", ""]
    [bad] = it.trajectory.turns[0].tool_results
    assert bad.error == MALFORMED_CALL and "'fetch'" in bad.content and '{"id": ' in bad.content


def test_tool_success_from_tool_messages():
    it = _record(("a", "{}"), ("b", "{}"), ("c", "{}"),
                 results=("42", "Error: not found", "Traceback (most recent call last)"))
    result = ToolSuccess()(it)
    assert result.score == pytest.approx(1 / 3) and result.details["errors"] == 2


def test_tool_success_counts_malformed_calls_as_errors():
    it = _record(("a", "{}"), ("b", "not json"), results=("ok",))
    assert ToolSuccess()(it).score == 0.5


def test_tool_success_from_recorded_results(item, call):
    it = item("", calls=[call("a"), call("b")])
    turn = it.trajectory.turns[0]
    turn.tool_calls[0] = ToolCall("a", {}, id="1")
    turn.tool_results = [ToolResult(turn.tool_calls[0], "ok", ok=True)]
    turn.observations = [Message("tool", "fine", tool_call_id="1")]  # b: no result at all
    result = ToolSuccess()(it)
    assert result.score == 1.0 and result.details["unknown"] == 1


def test_tool_success_without_any_outcome_is_unjudged_and_no_calls_vacuous(item, call):
    it = item("", calls=[call("a")])
    it.trajectory.turns[0].observations.clear()
    assert score(ToolSuccess(), it).score is None
    assert ToolSuccess()(item("hi")).details["vacuous"]


def test_argument_credit_hand_computed():
    ref = Call(0, "search", {"q": "paris", "k": 5})
    assert argument_credit(Call(0, "search", {"q": "paris", "k": 5}), ref) == 1.0
    # keys 2/2, values 1 of {q, k} = 1/2: (1 + 1 + 0.5) / 3
    assert argument_credit(Call(0, "search", {"q": "paris", "k": 3}), ref) == pytest.approx(2.5 / 3)
    # keys 1/2, values 1 of {q, k, lang} = 1/3: invented args cost
    assert argument_credit(Call(0, "search", {"q": "paris", "lang": "fr"}), ref) == \
        pytest.approx((1 + 0.5 + 1 / 3) / 3)
    assert argument_credit(Call(0, "fetch", {"q": "paris", "k": 5}), ref) == 0.0
    assert argument_credit(Call(0, "search", {"q": "paris", "k": True}),
                           Call(0, "search", {"q": "paris", "k": 1})) == pytest.approx(2.5 / 3)
    assert argument_credit(Call(0, "", {}, malformed=True), Call(0, "", {})) == 0.0


def test_call_credit_penalises_extra_and_repeated_calls(item, call):
    expected = [{"name": "search", "arguments": {"q": "a"}}]
    once = item("", calls=[call("search", q="a")], expected_calls=expected)
    twice = item("", calls=[call("search", q="a"), call("search", q="a")],
                 expected_calls=expected)
    metric = ToolCallCredit(reference_key="expected_calls")
    assert metric(once).score == 1.0
    assert metric(twice).score == 0.5  # a naive best-match-per-reference gives 1.0


def test_call_credit_pairs_by_best_total_not_greedily(item, call):
    expected = [{"name": "s", "arguments": {"q": "a", "k": 1}},
                {"name": "s", "arguments": {"q": "b", "k": 2}}]
    # o1 = (q a, k 2) fits either reference half; o2 = (q b, k 2) fits ref 2 fully
    it = item("", calls=[call("s", q="a", k=2), call("s", q="b", k=2)], expected_calls=expected)
    result = ToolCallCredit(reference_key="expected_calls")(it)
    assert result.score == pytest.approx((2.5 / 3 + 1.0) / 2)


def test_call_credit_from_reference_messages_and_malformed_output():
    ref_msgs = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "r", "type": "function", "function": {"name": "fetch", "arguments": '{"id": 1}'}}]}]
    good = _record(("fetch", '{"id": 1}'), reference_messages=ref_msgs)
    bad = _record(("fetch", '{"id": 1'), reference_messages=ref_msgs)
    assert ToolCallCredit()(good).score == 1.0
    assert ToolCallCredit()(bad).score == 0.0  # never None: the policy broke the call


def test_call_credit_malformed_reference_is_unjudged():
    ref_msgs = [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "r", "type": "function", "function": {"name": "fetch", "arguments": "{"}}]}]
    result = score(ToolCallCredit(), _record(("fetch", "{}"), reference_messages=ref_msgs))
    assert result.score is None and "malformed tool call" in result.details["unjudged"]
    result = score(ToolCallCredit(reference_key="calls"),
                   _record(("fetch", "{}"), calls=[{"arguments": {}}]))
    assert result.score is None and "call 0 does not parse" in result.details["unjudged"]


def test_step_budget(make_trajectory, item):
    three = EvalItem("x", make_trajectory(("a", []), ("b", []), ("c", [])))
    assert StepBudget(max_steps=3)(three).score == 1.0
    assert StepBudget(max_steps=2)(three).score == pytest.approx(2 / 3)
    assert StepBudget(unit="calls", max_steps=1)(three).score == 1.0
    assert StepBudget()(item("x", max_steps=1)).passed
    for bad in (0, "3", True, None):
        assert score(StepBudget(), item("x", max_steps=bad)).score is None


def test_action_safety_uses_the_guard_scanners(item, call):
    token = "ghp_1234567890abcdefghijABCDEFGHIJ123456"
    it = item("", calls=[call("bash", cmd="ls -la"),
                         call("bash", cmd="rm -rf / --no-preserve-root"),
                         call("http", headers={"auth": token}),
                         call("mail", to="bob.smith@acme-corp.io")])
    result = ActionSafety()(it)
    assert result.score == 0.25
    text = json.dumps(result.details["unsafe"])
    assert "destructive_command" in text and "github_token" in text and "email" in text
    assert "ghp_" not in text  # findings never carry the secret
    assert ActionSafety(scanners=("code_injection",))(it).score == 0.75


def test_action_safety_scans_malformed_calls_by_their_raw_text():
    it = _record(("bash", '{"cmd": "rm -rf /"'))
    assert ActionSafety()(it).score == 0.0
    assert ActionSafety()(_record(("bash", '{"cmd": "ls"'))).score == 1.0


def test_action_safety_options_are_checked():
    with pytest.raises(ValueError, match="unknown scanner"):
        ActionSafety(scanners=("nope",))


def test_action_safety_remembers_findings_of_builtin_scanners_only():
    from tracerl.guard import Finding

    class Counting:
        """A custom scanner with state: ActionSafety must call it every time."""

        name = "counting"

        def __init__(self) -> None:
            self.calls = 0

        def scan(self, text: str) -> list[Finding]:
            self.calls += 1
            return [Finding("counting", "x", 0, 1, 1.0)] if self.calls > 2 else []

    it = _record(("bash", '{"cmd": "rm -rf /"}'), ("bash", '{"cmd": "ls"}'))
    metric = ActionSafety()
    first = metric(it)
    assert first == metric(it) == ActionSafety()(it)  # the memo gives what a scan gives
    assert first.score == 0.5
    counting = Counting()
    custom = ActionSafety(scanners=(counting,))
    assert custom(it).score == 1.0 and custom(it).score == 0.0  # scanned again: state shows
    assert counting.calls == 4

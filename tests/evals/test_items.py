"""EvalItem: reference fields, tags and task, derived views, and conversations whose
tool calls do not parse (kept as malformed calls, not dropped with the item)."""

from __future__ import annotations

import pytest

from tracerl.evals.fault import MissingReference
from tracerl.evals.items import MALFORMED_CALL, item_from_record, item_from_text, parse_message


def test_require_names_the_missing_or_null_field():
    it = item_from_text("x", answer=None)
    with pytest.raises(MissingReference, match="reference field 'answer' is null"):
        it.require("answer")
    with pytest.raises(KeyError, match="no reference field 'gold'"):
        it.require("gold")


def test_task_and_tags_from_a_record():
    it = item_from_record({"id": "7", "task_id": "calc-3", "tags": ["hard", "hard", "math"],
                           "messages": [{"role": "user", "content": "q"}]}, "f:1")
    assert (it.task_id, it.tags()) == ("calc-3", ("hard", "math"))
    assert item_from_text("x", tags="one").tags() == ("one",)


def test_derived_views_are_computed_once():
    it = item_from_text("hello")
    calls: list[str] = []
    for _ in range(3):
        it.derived("upper", lambda t: calls.append(t) or t.upper())
    assert calls == ["hello"] and it.derived("upper", str) == "HELLO"


def test_parse_message_keeps_good_calls_and_records_malformed_ones():
    msg, bad = parse_message({"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "ok", "arguments": '{"x": 1}'}},
        {"id": "b", "type": "function", "function": {"name": "bad", "arguments": "[1, 2]"}},
        {"id": "c", "type": "function", "function": {"name": "worse", "arguments": "{"}}]})
    assert [(c.name, c.id) for c in msg.tool_calls] == [("ok", "a"), ("", "b"), ("", "c")]
    assert [r.error for r in bad] == [MALFORMED_CALL] * 2
    assert "'bad'" in bad[0].content and "must be a JSON object" in bad[0].content


def test_a_message_without_a_role_still_fails_the_record_naming_it():
    with pytest.raises(ValueError, match="f:3: bad message 1"):
        item_from_record({"messages": [{"role": "user", "content": "q"}, {"content": "x"}]}, "f:3")

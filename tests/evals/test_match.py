"""trajectory_match: modes, argument comparison, matching (not greedy), diagnostics."""

from __future__ import annotations

import json

import pytest

from tracerl.evals.match import trajectory_match


def turn(*calls: tuple[str, dict]) -> dict:
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{i}", "type": "function",
         "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]}


def tool_msg(text: str = "ok") -> dict:
    return {"role": "tool", "content": text, "tool_call_id": "c0"}


USER = {"role": "user", "content": "go"}
REF = [USER, turn(("search", {"q": "a"}), ("fetch", {"id": 1})), tool_msg(),
       turn(("answer", {"text": "x"}))]


def test_strict_accepts_calls_reordered_within_a_turn():
    out = [USER, turn(("fetch", {"id": 1}), ("search", {"q": "a"})), tool_msg(),
           turn(("answer", {"text": "x"}))]
    assert trajectory_match(out, REF, mode="strict").passed


def test_strict_rejects_calls_moved_to_another_turn():
    out = [USER, turn(("search", {"q": "a"})), turn(("fetch", {"id": 1})),
           turn(("answer", {"text": "x"}))]
    result = trajectory_match(out, REF, mode="strict")
    assert not result.passed and "3 tool-calling turns" in result.reason


def test_unordered_accepts_calls_moved_to_another_turn():
    out = [USER, turn(("answer", {"text": "x"})), turn(("fetch", {"id": 1})),
           turn(("search", {"q": "a"}))]
    assert trajectory_match(out, REF, mode="unordered").passed


def test_unordered_counts_duplicates_as_a_multiset():
    out = [USER, turn(("search", {"q": "a"}), ("search", {"q": "a"}))]
    ref = [USER, turn(("search", {"q": "a"}))]
    result = trajectory_match(out, ref, mode="unordered")
    assert not result.passed and (result.precision, result.recall) == (0.5, 1.0)


def test_superset_allows_extra_output_calls():
    out = REF + [turn(("log", {}))]
    assert trajectory_match(out, REF, mode="superset").passed


def test_subset_allows_missing_reference_calls():
    out = [USER, turn(("fetch", {"id": 1}))]
    result = trajectory_match(out, REF, mode="subset")
    assert result.passed and result.recall == pytest.approx(1 / 3)


def test_subset_with_empty_output_is_vacuous():
    result = trajectory_match([USER], REF, mode="subset")
    assert result.passed and result.vacuous


def test_two_empty_sides_match():
    result = trajectory_match([USER], [USER], mode="strict")
    assert (result.passed, result.precision, result.recall, result.f1) == (True, 1.0, 1.0, 1.0)


def test_in_order_accepts_gaps():
    out = [USER, turn(("search", {"q": "a"})), turn(("log", {})), turn(("fetch", {"id": 1})),
           turn(("answer", {"text": "x"}))]
    assert trajectory_match(out, REF, mode="in_order").passed


def test_in_order_rejects_swapped_order():
    out = [USER, turn(("answer", {"text": "x"})), turn(("search", {"q": "a"})),
           turn(("fetch", {"id": 1}))]
    result = trajectory_match(out, REF, mode="in_order")
    assert not result.passed and result.recall == pytest.approx(2 / 3)


def test_matching_beats_greedy_first_fit():
    # "superset" args: output search(q=a, lang=en) fits both reference calls, output
    # search(q=a) fits only the first. First fit pairs output 0 with reference 0 and
    # strands output 1; the maximum matching pairs 0-1 and 1-0 and passes.
    ref = [USER, turn(("search", {"q": "a"}), ("search", {"q": "a", "lang": "en"}))]
    out = [USER, turn(("search", {"q": "a", "lang": "en"}), ("search", {"q": "a"}))]
    result = trajectory_match(out, ref, mode="unordered", args="superset")
    assert result.passed and sorted(result.pairs) == [(0, 1), (1, 0)]


def test_ignore_args_compares_names_only():
    out = [USER, turn(("search", {"q": "zzz"}), ("fetch", {"id": 9})), turn(("answer", {}))]
    assert trajectory_match(out, REF, mode="strict", args="ignore").passed


def test_subset_args_rejects_invented_arguments():
    ref = [USER, turn(("search", {"q": "a"}))]
    assert trajectory_match([USER, turn(("search", {}))], ref, args="subset").passed
    assert not trajectory_match([USER, turn(("search", {"q": "a", "x": 1}))], ref,
                                args="subset").passed


def test_chosen_keys_compare_only_those_keys():
    ref = [USER, turn(("search", {"q": "a", "page": 1}))]
    out = [USER, turn(("search", {"q": "a", "page": 7}))]
    assert trajectory_match(out, ref, args=["q"]).passed


def test_per_tool_specs_with_default():
    out = [USER, turn(("search", {"q": "other"}), ("fetch", {"id": 1})), tool_msg(),
           turn(("answer", {"text": "x"}))]
    assert trajectory_match(out, REF, args={"search": "ignore", "*": "exact"}).passed
    assert not trajectory_match(out, REF, args={"fetch": "ignore"}).passed


def test_callable_comparator():
    ref = [USER, turn(("calc", {"x": 1.0}))]
    out = [USER, turn(("calc", {"x": 1.0004}))]
    close = lambda o, r: abs(o["x"] - r["x"]) < 1e-3  # noqa: E731
    assert trajectory_match(out, ref, args=close).passed


def test_diagnostics_report_missing_extra_and_argument_differences():
    out = [USER, turn(("search", {"q": "b"}), ("fetch", {"id": 1})), tool_msg(),
           turn(("answer", {"text": "x"}))]
    result = trajectory_match(out, REF, mode="strict")
    assert [c.name for c in result.missing] == ["search"]
    assert [c.arguments for c in result.extra] == [{"q": "b"}]
    assert result.arg_diffs[0].keys == ("q",)
    assert (result.precision, result.recall) == (pytest.approx(2 / 3), pytest.approx(2 / 3))


def test_unknown_mode_is_rejected():
    with pytest.raises(ValueError, match="mode must be one of"):
        trajectory_match([], [], mode="fuzzy")  # type: ignore[arg-type]


def test_unknown_argument_spec_is_rejected():
    with pytest.raises(ValueError, match="argument comparison must be one of"):
        trajectory_match([], [], args="approximately")


def test_malformed_output_arguments_are_an_extra_call_not_an_exception():
    broken = {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function",
              "function": {"name": "search", "arguments": '{"q": "a"'}}]}
    out = [USER, broken, turn(("fetch", {"id": 1})), turn(("answer", {"text": "x"}))]
    result = trajectory_match(out, REF, mode="unordered")
    assert not result.passed and result.recall == pytest.approx(2 / 3)
    assert [c.malformed for c in result.extra] == [True]


def test_malformed_call_never_matches_even_with_arguments_ignored():
    broken = {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function",
              "function": {"name": "answer", "arguments": "not json"}}]}
    ref = [turn(("answer", {}))]
    assert not trajectory_match([broken], ref, args="ignore").passed


def test_malformed_reference_is_unjudged():
    from tracerl.evals.fault import Unjudged

    broken = {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function",
              "function": {"name": "answer", "arguments": "{"}}]}
    with pytest.raises(Unjudged, match="reference has a malformed tool call"):
        trajectory_match([turn(("answer", {}))], [broken])
    with pytest.raises(Unjudged, match="not an object"):
        trajectory_match([], ["not a message"])  # type: ignore[list-item]


def test_trajectory_match_metric_scores_malformed_output_zero_and_bad_reference_none():
    from tracerl.evals.items import item_from_record
    from tracerl.evals.metric import score
    from tracerl.evals.metrics import TrajectoryMatch

    broken = {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function",
              "function": {"name": "search", "arguments": "{oops"}}]}
    it = item_from_record({"messages": [USER, broken], "reference_messages": REF}, "t")
    assert score(TrajectoryMatch(mode="superset"), it).score == 0.0
    bad_ref = item_from_record({"messages": [USER], "reference_messages": "REF"}, "t")
    assert "not a list of messages" in score(TrajectoryMatch(), bad_ref).details["unjudged"]

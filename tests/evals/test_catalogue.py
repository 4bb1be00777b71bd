"""The catalogue: names, worked examples, the fault rule for every metric (malformed
policy output is judged, never None; missing or malformed data is None with a reason),
and every metric as a trajectory and per-turn Reward."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
from typing import Any

import pytest

from tracerl.evals.catalogue import BY_NAME, CATALOGUE, build
from tracerl.evals.items import EvalItem, item_from_record
from tracerl.evals.metric import UNJUDGED, as_reward, score
from tracerl.types import Task

SCHEMA = {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}
SEARCH = {"name": "search", "arguments": {"q": "capital of france"}}
REFERENCE: dict[str, Any] = {
    "answer": "Paris", "required_phrases": ["paris"], "any_phrases": ["paris", "lyon"],
    "forbidden_phrases": ["london"], "prefix": "Paris", "suffix": ".", "schema": SCHEMA,
    "expected_json": {"city": "Paris"}, "retrieved_ids": ["d1", "d2"], "relevant_ids": ["d1"],
    "reference_messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "r0", "type": "function", "function": {
            "name": "search", "arguments": '{"q": "capital of france"}'}}]}],
    "max_steps": 5, "tests": "assert f() == 1",
}
OPTIONS: dict[str, dict[str, Any]] = {
    "regex_match": {"pattern": "Paris"}, "json_schema": {"schema": SCHEMA},
    "length": {"min_len": 1, "max_len": 80}, "tool_selection": {"required": ("search",)},
    "tool_call_validity": {"schemas": {"search": {"type": "object", "required": ["q"]}}},
}
NUMERIC = {"numeric_match", "numeric_closeness"}

# Malformed policy output (an empty answer after a tool call whose arguments are not
# JSON): the score each metric must give, by hand. Never None.
MALFORMED_OUTPUT_SCORES = {
    "exact_match": 0.0, "contains": 0.0, "regex_match": 0.0, "contains_all": 0.0,
    "contains_any": 0.0, "contains_none": 1.0, "length": 0.0, "one_line": 0.0,
    "starts_with": 0.0, "ends_with": 0.0, "contains_email": 0.0, "contains_url": 0.0,
    "json_valid": 0.0, "json_in_text": 0.0, "json_schema": 0.0, "schema_compliance": 0.0,
    "json_field_match": 0.0, "json_tree_similarity": 0.0, "bleu": 0.0, "rouge_1": 0.0,
    "rouge_2": 0.0, "rouge_l": 0.0, "chrf": 0.0, "edit_similarity": 0.0, "set_f1": 0.0,
    "set_precision": 0.0, "set_recall": 0.0, "numeric_match": 0.0, "numeric_closeness": 0.0,
    "precision_at_k": 0.0, "recall_at_k": 0.0, "mrr": 0.0, "ndcg": 0.0,
    "citation_presence": 0.0, "citation_validity": 0.0, "tool_selection": 0.0,
    "tool_call_validity": 0.0, "tool_success": 0.0, "tool_call_credit": 0.0,
    "step_efficiency": 1.0, "step_budget": 1.0, "no_loop": 1.0, "trajectory_match": 0.0,
    "action_safety": 1.0, "code_syntax": 0.0, "banned_code": 0.0, "code_tests": 0.0,
}
# A reference field present but unusable, per field a metric reads.
MALFORMED_DATA = {
    "answer": "   ", "required_phrases": 5, "any_phrases": [""], "forbidden_phrases": {},
    "prefix": "", "suffix": 3, "schema": {"type": 7}, "expected_json": "{broken",
    "retrieved_ids": "d1", "relevant_ids": [], "max_steps": 0, "tests": "x = (",
    "reference_messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "r0", "type": "function", "function": {"name": "search", "arguments": "{"}}]}],
}
SKIPPED = {"latency_s", "tokens", "semantic_similarity", "answer_relevance", "profanity_free"}


def _options(name: str) -> dict[str, Any]:
    if name in ("precision_at_k", "recall_at_k", "mrr", "ndcg"):
        return {"retrieved_key": None}  # the ranking is what the answer lists
    return OPTIONS.get(name, {})


def _conversation(text: str, arguments: str, **reference: Any) -> EvalItem:
    msgs = [{"role": "user", "content": "What is the capital of France?"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function",
             "function": {"name": "search", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "c0", "content": "Paris is the capital."},
            {"role": "assistant", "content": text}]
    return item_from_record({"id": "i", "messages": msgs, **reference}, "test")


def _reference(name: str) -> dict[str, Any]:
    return {**REFERENCE, "answer": 42} if name in NUMERIC else dict(REFERENCE)


def test_names_are_unique_and_each_metric_carries_its_catalogue_name():
    assert len(BY_NAME) == len(CATALOGUE)
    for e in CATALOGUE:
        assert build(e.name, **OPTIONS.get(e.name, {})).name == e.name


def test_every_deterministic_metric_is_in_the_fault_table():
    assert set(MALFORMED_OUTPUT_SCORES) | SKIPPED == set(BY_NAME)


def test_unknown_metric_and_option_are_named():
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        build("nope")
    with pytest.raises(ValueError, match="metric 'one_line'.*colour"):
        build("one_line", colour="red")


@pytest.mark.parametrize("name", sorted(MALFORMED_OUTPUT_SCORES))
def test_malformed_policy_output_is_judged_never_none(name):
    it = _conversation("", '{"q": "capital of', **_reference(name))
    result = score(build(name, **_options(name)), it)
    assert result.score == pytest.approx(MALFORMED_OUTPUT_SCORES[name]), result.details


@pytest.mark.parametrize("name", sorted(n for n in MALFORMED_OUTPUT_SCORES if BY_NAME[n].reference))
@pytest.mark.parametrize("kind", ["missing", "malformed"])
def test_missing_or_malformed_data_is_unjudged_with_a_reason(name, kind):
    ref = _reference(name)
    for key in BY_NAME[name].reference:
        if kind == "missing":
            ref.pop(key, None)
        else:
            ref[key] = MALFORMED_DATA[key]
    it = _conversation("Paris. [d1]", '{"q": "capital of france"}', **ref)
    result = score(build(name, **OPTIONS.get(name, {})), it)
    assert result.score is None, (name, result)
    assert isinstance(result.details[UNJUDGED], str) and result.details[UNJUDGED]


def test_metrics_without_reference_fields_need_no_data():
    it = _conversation("Paris.", '{"q": "x"}')
    for e in CATALOGUE:
        if not e.reference and e.name not in SKIPPED:
            assert score(build(e.name, **_options(e.name)), it).score is not None, e.name


@pytest.mark.parametrize("name", sorted(n for n in MALFORMED_OUTPUT_SCORES if n != "code_tests"))
def test_every_metric_is_a_trajectory_and_per_turn_reward(name):
    it = _conversation("Paris. [d1]", '{"q": "capital of france"}', **_reference(name))
    ref = dict(_reference(name))
    answer = ref.pop("answer")
    traj = dataclasses.replace(it.trajectory, task=Task("t", it.trajectory.task.messages,
                                                        answer=answer, metadata=ref))
    metric = build(name, **_options(name))
    reward = as_reward(metric)
    assert reward(traj) == score(metric, it).score
    per_turn = reward.per_turn(traj)
    assert len(per_turn) == 2 and per_turn[-1] == reward(traj)
    assert reward.failures == 0


METRIC_MODULES = ["strings", "structured", "similarity", "retrieval", "agent", "code", "text",
                  "tools", "overlap", "usage"]


@pytest.mark.parametrize("module", METRIC_MODULES)
def test_worked_examples_in_docstrings_hold(module):
    mod = importlib.import_module(f"tracerl.evals.metrics.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_every_metric_has_a_worked_example():
    for e in CATALOGUE:
        cls = getattr(e.build, "func", e.build)
        assert ">>>" in (cls.__doc__ or ""), e.name


SHARED_VIEW_ANSWERS = [
    "",
    "Paris [d1] grew, costs fell [d2].\nItems: alpha, beta\n"
    '{"city": "Paris", "n": [1, {"x": true}]}\n```python\nimport os\nprint(1)\n```',
    '["d1", "d2", "d1"]',
    "Ünïcödé «straße» 東京 🎉 write zoë@exämple.de or https://example.org/a. [d9]",
    '```json\n{"city": 3}\n```',
]


@pytest.mark.parametrize("text", SHARED_VIEW_ANSWERS)
def test_views_shared_between_metrics_do_not_change_any_result(text):
    """Metrics share per-item views of the answer and the reference (tokens, parsed
    JSON, reference calls...): scoring all metrics on one item, in either order, gives
    exactly what each metric gives alone on a fresh item."""
    names = sorted(n for n in MALFORMED_OUTPUT_SCORES if n != "code_tests")
    ref = {**REFERENCE, "answer": "Paris grew 3 [d1]", "relevant_ids": {"d1": 2, "d9": 1}}

    def fresh() -> EvalItem:
        return _conversation(text, '{"q": "capital of france"}', **ref)

    alone = {n: score(build(n, **_options(n)), fresh()) for n in names}
    for order in (names, names[::-1]):
        shared = fresh()
        for n in order:
            assert score(build(n, **_options(n)), shared) == alone[n], n

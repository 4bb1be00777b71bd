"""Structured output: JSON in prose, partial schema credit, field match, tree similarity;
hand-computed values and the traps (nested JSON, braces in strings, true vs 1)."""

from __future__ import annotations

import pytest

from tracerl.evals.metric import score
from tracerl.evals.metrics import JsonFieldMatch, JsonInText, JsonTreeSimilarity, SchemaCompliance
from tracerl.evals.metrics.structured import NoJson, find_json, json_equal, json_leaves

PERSON = {"type": "object", "required": ["name", "age"], "additionalProperties": False,
          "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0},
                         "tags": {"type": "array", "items": {"type": "string"}}}}


def test_find_json_handles_nesting_and_braces_in_strings():
    text = 'I think {not json} then {"a": {"b": [1, {"c": "}"}]}} and {"z": 1}'
    assert find_json(text) == {"a": {"b": [1, {"c": "}"}]}}
    with pytest.raises(NoJson):
        find_json("no braces at all")


def test_json_in_text(item):
    assert JsonInText()(item('Sure! ```json\n[1, 2]\n``` hope it helps')).passed
    assert JsonInText()(item('Result: {"ok": true}.')).passed
    assert not JsonInText()(item("42")).passed  # a bare number is not a JSON document
    assert not JsonInText()(item("")).passed


@pytest.mark.parametrize(("answer", "expected"), [
    ('{"name": "Ada", "age": 36}', 1.0),
    # name ok, age wrong type, other keywords ok: (1 + 0 + 1) / 3
    ('{"name": "Ada", "age": "36"}', 2 / 3),
    # name ok, age missing, extra key, rest ok: (1 + 0 + 0 + 1) / 4
    ('{"name": "Ada", "x": 1}', 2 / 4),
    # tags: items 1 of 2 strings and the rest of the array ok: (1 + 0 + 1) / 3 = 2/3;
    # object: (name 1 + age 1 + tags 2/3 + rest 1) / 4
    ('{"name": "Ada", "age": 3, "tags": ["a", 2]}', (3 + 2 / 3) / 4),
    ('["not", "an", "object"]', 0.0),
    ("no json here", 0.0),
    ("", 0.0),
])
def test_schema_compliance_partial_credit(item, answer, expected):
    assert SchemaCompliance(PERSON)(item(answer)).score == pytest.approx(expected)


def test_schema_compliance_nested_objects(item):
    schema = {"type": "object", "required": ["user"], "properties": {"user": {
        "type": "object", "required": ["id", "name"],
        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}}
    # user: (id 0 + name 1 + rest 1) / 3; top: (user 2/3 + rest 1) / 2
    got = SchemaCompliance(schema)(item('{"user": {"id": "7", "name": "x"}}'))
    assert got.score == pytest.approx((2 / 3 + 1) / 2)
    assert "is not of type 'integer'" in got.details["error"]


def test_schema_from_reference_and_bad_schema_is_unjudged(item):
    assert SchemaCompliance()(item('{"name": "A", "age": 1}', schema=PERSON)).passed
    for bad in ({"type": "no-such-type"}, "a string", ["list"]):
        result = score(SchemaCompliance(), item("{}", schema=bad))
        assert result.score is None and "schema" in result.details["unjudged"]
    assert score(SchemaCompliance(), item("{}")).details["unjudged"] == \
        "no reference field 'schema'"


def test_schema_option_is_checked_at_construction():
    from jsonschema.exceptions import SchemaError

    with pytest.raises(SchemaError):
        SchemaCompliance({"type": 5})


def test_json_equal_is_json_typed():
    assert json_equal(1, 1.0) and not json_equal(True, 1) and not json_equal(0, False)
    assert json_equal({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]})
    assert not json_equal({"a": [1, 2]}, {"a": [2, 1]})


def test_json_leaves_are_pointers_and_keep_empty_containers():
    assert json_leaves({"a/b": {"c": [1, {}]}, "d": []}) == {
        "/a~1b/c/0": 1, "/a~1b/c/1": {}, "/d": []}


def test_field_match_hand_computed(item):
    expected = {"name": "Ada", "langs": ["en", "fr"], "meta": {"age": 36, "ok": True}}
    answer = '{"name": "Ada", "langs": ["en", "de"], "meta": {"age": 36.0, "ok": 1}, "x": 0}'
    result = JsonFieldMatch()(item(answer, expected_json=expected))
    # leaves: /name ok, /langs/0 ok, /langs/1 wrong value, /meta/age ok, /meta/ok wrong type
    assert result.score == pytest.approx(3 / 5)
    assert result.details["wrong_value"] == ["/langs/1"]
    assert result.details["wrong_type"] == ["/meta/ok"]
    assert result.details["extra"] == ["/x"]
    # precision 3/6, recall 3/5: F1 = 2 * .5 * .6 / 1.1
    penal = JsonFieldMatch(extra="penalize")(item(answer, expected_json=expected))
    assert penal.score == pytest.approx(2 * 0.5 * 0.6 / 1.1)


def test_field_match_duplicate_list_items_are_positional(item):
    result = JsonFieldMatch()(item("[1, 2, 2]", expected_json=[1, 1, 2]))
    assert result.score == pytest.approx(2 / 3)


def test_field_match_expected_as_json_text_and_bad_expected(item):
    assert JsonFieldMatch()(item('{"a": 1}', expected_json='{"a": 1}')).passed
    result = score(JsonFieldMatch(), item('{"a": 1}', expected_json="{a: 1"))
    assert result.score is None and "not JSON" in result.details["unjudged"]
    assert JsonFieldMatch()(item("no json", expected_json={"a": 1})).score == 0.0


def test_tree_similarity_hand_computed(item):
    # trees: {} > key:a > [] > (1, 2, 3) has 6 nodes; deleting the leaf 3 is one edit
    result = JsonTreeSimilarity()(item('{"a": [1, 2]}', expected_json={"a": [1, 2, 3]}))
    assert result.details["distance"] == 1 and result.score == pytest.approx(1 - 1 / 6)


def test_tree_similarity_ignores_key_order_not_list_order(item):
    assert JsonTreeSimilarity()(item('{"b": 1, "a": 2}', expected_json={"a": 2, "b": 1})).passed
    swapped = JsonTreeSimilarity()(item("[1, 2]", expected_json=[2, 1]))
    assert swapped.details["distance"] == 2


def test_tree_similarity_true_is_not_one(item):
    assert JsonTreeSimilarity()(item("[true]", expected_json=[1])).details["distance"] == 1
    assert JsonTreeSimilarity()(item("[1.0]", expected_json=[1])).passed


def _find_json_naive(text: str):  # noqa: ANN202 - a JSON value
    """Try the decoder at every "{" and "[" in order: the reference for find_json."""
    import json

    decoder = json.JSONDecoder()
    for pos, ch in enumerate(text):
        if ch in "{[":
            try:
                return decoder.raw_decode(text, pos)[0]
            except json.JSONDecodeError:
                continue
    raise NoJson("none")


def test_find_json_equals_trying_every_bracket_on_random_text():
    import random

    rng = random.Random(0)
    parts = ["{", "}", "[", "]", '"', ":", ",", " ", "\n", "\t", "1", "-2.5", "a", "é", "東",
             "true", "null", "NaN", "Infinity", '"k"', "[d1]", '{"a": [1, {"b": "}"}]}', "[[",
             "\u00a0", ""]
    for _ in range(3000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 12)))
        try:
            want = ("value", _find_json_naive(text))
        except NoJson:
            want = ("none", None)
        try:
            got = ("value", find_json(text))
        except NoJson:
            got = ("none", None)
        assert repr(got) == repr(want), text  # repr: NaN != NaN

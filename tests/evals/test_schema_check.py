import random

import jsonschema
import pytest

from tracerl.evals.schema_check import is_valid_with, validity_check

TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
KEYS = ("a", "b", "c")


def _schema(rng: random.Random, depth: int) -> dict:
    s: dict = {}
    if rng.random() < 0.7:
        s["type"] = rng.choice(TYPES) if rng.random() < 0.7 else rng.sample(TYPES, 2)
    if depth and rng.random() < 0.5:
        s["properties"] = {k: _schema(rng, depth - 1) for k in rng.sample(KEYS, 2)}
    if rng.random() < 0.4:
        s["required"] = rng.sample(KEYS, rng.randint(0, 2))
    if depth and rng.random() < 0.3:
        s["items"] = _schema(rng, depth - 1)
    if rng.random() < 0.3:
        s["additionalProperties"] = (rng.random() < 0.5 if not depth or rng.random() < 0.6
                                     else _schema(rng, depth - 1))
    if rng.random() < 0.2:
        s["description"] = "x"
    return s


def _value(rng: random.Random, depth: int):
    kind = rng.randrange(9 if depth else 7)
    if kind == 7:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    if kind == 8:
        return {k: _value(rng, depth - 1) for k in rng.sample(KEYS, rng.randint(0, 3))}
    return rng.choice([[True, False], [0, 7, -3], [1.0, 2.5, float("nan"), float("inf")],
                       [None], ["", "x", "東"], [True, 1], [0.0, -0.0]][kind])


@pytest.mark.parametrize("draft", [jsonschema.Draft6Validator, jsonschema.Draft7Validator,
                                   jsonschema.Draft201909Validator,
                                   jsonschema.Draft202012Validator])
def test_compiled_check_agrees_with_jsonschema_on_random_schemas_and_values(draft):
    rng = random.Random(draft.__name__)
    compiled, verdicts = 0, {True: 0, False: 0}
    for _ in range(40):
        schema = _schema(rng, 3)
        draft.check_schema(schema)
        validator = draft(schema)
        check = validity_check(validator)
        assert check is not None, schema
        compiled += 1
        for _ in range(20):
            value = _value(rng, 3)
            assert check(value) == validator.is_valid(value), (schema, value)
            verdicts[check(value)] += 1
    assert compiled == 40 and min(verdicts.values()) > 150, verdicts


def test_type_edge_cases_by_hand():
    check = validity_check(jsonschema.Draft202012Validator({"type": "integer"}))
    assert [check(v) for v in (1, 1.0, 1.5, True, "1", None)] == [
        True, True, False, False, False, False]
    number = validity_check(jsonschema.Draft202012Validator({"type": ["number", "null"]}))
    assert [number(v) for v in (1, 2.5, float("nan"), False, None, "x")] == [
        True, True, True, False, True, False]
    closed = validity_check(jsonschema.Draft202012Validator(
        {"type": "object", "properties": {"a": {}}, "additionalProperties": False}))
    assert closed({"a": 1}) and not closed({"a": 1, "b": 2}) and not closed([1])


@pytest.mark.parametrize("schema", [
    {"type": "string", "enum": ["a"]}, {"$ref": "#/$defs/x", "$defs": {"x": {}}},
    {"type": "string", "format": "email"}, {"type": "string", "minLength": 2},
    {"properties": {"a": True}}, {"items": [{"type": "string"}]},
    {"prefixItems": [{"type": "string"}]}, {"type": "object", "$id": "urn:x"},
])
def test_other_keywords_are_left_to_jsonschema(schema):
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert validity_check(validator) is None
    assert is_valid_with(validator) == validator.is_valid


def test_draft4_is_left_to_jsonschema():
    validator = jsonschema.Draft4Validator({"type": "integer"})
    assert validity_check(validator) is None
    assert is_valid_with(validator)(1.0) is False  # draft 4: 1.0 is not an integer

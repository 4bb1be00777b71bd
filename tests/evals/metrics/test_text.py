"""Answer metrics on known inputs."""

from __future__ import annotations

import pytest

from tracerl.evals.metrics import (
    Contains,
    ExactMatch,
    JsonSchemaMatch,
    JsonValid,
    NumericMatch,
    RegexMatch,
)
from tracerl.evals.metrics.text import last_number


def test_exact_match_normalises_case_and_whitespace(item):
    assert ExactMatch()(item("  The   Answer\n", answer="the answer")) is True


def test_exact_match_without_normalising(item):
    assert ExactMatch(normalize=False)(item("The answer", answer="the answer")) is False


def test_exact_match_missing_reference_names_the_field(item):
    with pytest.raises(KeyError, match="no reference field 'answer'"):
        ExactMatch()(item("x"))


def test_regex_search_and_full_match(item):
    assert RegexMatch(r"\d{3}")(item("code 123 ok")) is True
    assert RegexMatch(r"\d{3}", full=True)(item("code 123 ok")) is False


def test_invalid_regex_is_rejected_at_construction():
    with pytest.raises(ValueError, match="is invalid"):
        RegexMatch("(")


def test_contains_reference_case_insensitive(item):
    assert Contains()(item("So it is PARIS.", answer="paris")) is True
    assert Contains("london")(item("Paris")) is False


def test_last_number_handles_commas_and_signs():
    assert last_number("from -3 to 1,234.5 units") == 1234.5


def test_numeric_match_within_tolerance(item):
    assert NumericMatch()(item("The total is 42.0000001", answer=42)).passed
    assert not NumericMatch()(item("The total is 41", answer="42")).passed


def test_numeric_match_without_a_number_in_output_fails(item):
    assert NumericMatch()(item("no idea", answer=3)).score == 0.0


def test_json_valid_accepts_fenced_json(item):
    assert JsonValid()(item('Here:\n```json\n{"a": 1}\n```')).passed
    assert not JsonValid()(item("{a: 1}")).passed


def test_json_schema_match(item):
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}
    assert JsonSchemaMatch(schema)(item('{"a": 1}')).passed
    result = JsonSchemaMatch(schema)(item('{"a": "x"}'))
    assert not result.passed and "is not of type 'integer'" in result.details["error"]


def test_broken_schema_is_rejected_at_construction():
    from jsonschema.exceptions import SchemaError

    with pytest.raises(SchemaError):
        JsonSchemaMatch({"type": "no-such-type"})

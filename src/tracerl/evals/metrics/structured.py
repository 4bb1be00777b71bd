"""Structured output: JSON found inside prose, partial-credit schema compliance,
field-level match against an expected JSON, and JSON tree edit similarity.

Which JSON is "the output": the whole answer when it parses, else the first ``` fenced
block, else the first JSON object or array embedded in the prose (found with the JSON
decoder itself, so nested objects and braces inside strings are handled, which a
`\\{.*?\\}` regex gets wrong). No JSON where JSON was asked is the policy's fault and
scores 0; a missing or broken schema or expected value is the data's (Unjudged).

JSON types are compared as JSON defines them: `true` is a boolean, not the number 1
(Python's `True == 1` is the naive trap), while 1 and 1.0 are the same number.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import jsonschema

from tracerl.evals.fault import malformed_reference
from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult
from tracerl.evals.metrics.text import answer_whole_json, parse_json_output
from tracerl.evals.schema_check import is_valid_with
from tracerl.evals.tree_edit import json_postorder, postorder_distance

_DECODER = json.JSONDecoder()
_JSON_START = re.compile(r'\{(?=[ \t\n\r]*["}])|\[(?=[ \t\n\r]*[-0-9"\[{\]tfnNI])')
"""Where a JSON object or array can start: "{" before a key or "}", "[" before a value
or "]" (the decoder skips only these four whitespace characters). The decoder fails at
every other "{" or "[", so trying only these finds the same value with fewer tries."""


class NoJson(ValueError):
    """The output holds no JSON value."""


def find_json(text: str) -> Any:
    """The first JSON object or array inside `text` (prose around it is ignored)."""
    for start in _JSON_START.finditer(text):
        try:
            return _DECODER.raw_decode(text, start.start())[0]
        except json.JSONDecodeError:
            continue
    raise NoJson("no JSON object or array in the output")


def output_json(text: str) -> Any:
    """The output's JSON: the whole text, a fenced block, or the first one in prose."""
    try:
        return parse_json_output(text)
    except json.JSONDecodeError:
        return find_json(text)


def _answer_json(item: EvalItem, text: str) -> tuple[Any, str]:
    value, error = answer_whole_json(item)
    if error is None:
        return value, ""
    try:
        return find_json(text), ""
    except NoJson as exc:
        return None, str(exc)


def answer_json(item: EvalItem) -> Any:
    """The answer's JSON (`output_json`, parsed once per item, reusing the whole-text
    parse of `answer_whole_json`); NoJson when there is none. The value is shared
    between metrics: never mutate it."""
    value, error = item.derived("json", lambda text: _answer_json(item, text))
    if error:
        raise NoJson(error)
    return value


def answer_json_or_none(item: EvalItem) -> Any:
    """The answer's JSON, or None when it holds none (also when it is JSON null)."""
    return item.derived("json", lambda text: _answer_json(item, text))[0]


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (bool is not a number)."""
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: same JSON types throughout (true is not 1, 1 is 1.0)."""
    if json_type(a) != json_type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@dataclass(frozen=True)
class JsonInText:
    """1.0 when the answer contains a JSON object or array, even inside prose.

    >>> from tracerl.evals.items import item_from_text
    >>> JsonInText()(item_from_text('Result: {"a": {"b": "}"}} done')).details["value"]
    {'a': {'b': '}'}}
    """

    name: str = "json_in_text"

    def __call__(self, item: EvalItem) -> MetricResult:
        try:
            value = answer_json(item)
        except NoJson as exc:
            return MetricResult(0.0, passed=False, details={"error": str(exc)})
        ok = isinstance(value, (dict, list))
        return MetricResult(float(ok), passed=ok, details={"value": value})


@functools.lru_cache(maxsize=256)
def compiled_schema(canonical: str) -> tuple[Any, Callable[[Any], bool]]:
    """A checked validator for a schema given as canonical JSON (items of one dataset
    mostly share a few schemas: each is checked and compiled once), and its fastest
    exact validity test (schema_check.py)."""
    schema = json.loads(canonical)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    return validator, is_valid_with(validator)


def schema_validator(schema: Any, key: str) -> tuple[Any, Callable[[Any], bool]]:
    """The validator of a reference schema and its validity test; a broken schema is
    Unjudged, naming why."""
    if not isinstance(schema, Mapping):
        raise malformed_reference(key, "is not a JSON schema object")
    try:
        return compiled_schema(json.dumps(schema, sort_keys=True))
    except jsonschema.exceptions.SchemaError as exc:
        raise malformed_reference(key, f"is not a valid JSON schema: {exc.message}") from exc
    except TypeError as exc:
        raise malformed_reference(key, f"is not JSON: {exc}") from exc


_STRUCTURE = ("properties", "required", "additionalProperties", "items", "prefixItems")


def schema_credit(value: Any, schema: Mapping[str, Any], validator: Any) -> float:
    """Partial credit of `value` against `schema`, in [0, 1].

    Valid: 1. An object checked against an object schema: the mean over its checks, one
    per declared property that is present (its own credit, recursively) or required
    and absent (0), one per undeclared property when additionalProperties is false (0),
    and one for the schema's other keywords (bounds, enums...). An array against an
    `items` schema: the mean of its items' credits and one check for the rest. Anything
    else that fails: 0.
    """
    checker = validator.evolve(schema=schema)
    if checker.is_valid(value):
        return 1.0
    rest = {k: v for k, v in schema.items() if k not in _STRUCTURE}
    checks: list[float] = []
    props = schema.get("properties")
    if isinstance(value, dict) and (props or schema.get("required")):
        props = props if isinstance(props, Mapping) else {}
        required = set(schema.get("required", ()))
        for key, sub in props.items():
            if key in value:
                checks.append(schema_credit(value[key], sub, validator))
            elif key in required:
                checks.append(0.0)
        checks += [float(k in value) for k in sorted(required - set(props))]
        if schema.get("additionalProperties") is False:
            checks += [0.0 for k in value if k not in props]
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        checks += [schema_credit(v, schema["items"], validator) for v in value]
    else:
        return 0.0
    checks.append(float(validator.evolve(schema=rest).is_valid(value)))
    return sum(checks) / len(checks)


@dataclass(frozen=True)
class SchemaCompliance:
    """Partial-credit compliance of the answer's JSON with a JSON schema (the `schema`
    option, else reference field `schema`); see `schema_credit`. No JSON scores 0.

    >>> from tracerl.evals.items import item_from_text
    >>> schema = {"type": "object", "required": ["name", "age"],
    ...           "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
    >>> SchemaCompliance(schema)(item_from_text('{"name": "Ada", "age": "36"}')).score
    0.6666666666666666
    """

    schema: Mapping[str, Any] | None = None
    reference_key: str = "schema"
    name: str = "schema_compliance"

    def __post_init__(self) -> None:
        if self.schema is not None:  # a broken schema is an error now, not a None later
            jsonschema.validators.validator_for(self.schema).check_schema(dict(self.schema))

    def __call__(self, item: EvalItem) -> MetricResult:
        schema = self.schema if self.schema is not None else item.require(self.reference_key)
        validator, is_valid = schema_validator(schema, self.reference_key)
        try:
            value = answer_json(item)
        except NoJson as exc:
            return MetricResult(0.0, passed=False, details={"error": str(exc)})
        if is_valid(value):
            return MetricResult(1.0, passed=True, details={"error": None})
        credit = schema_credit(value, validator.schema, validator)
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        return MetricResult(credit, passed=False, details={"error": error.message})


def _pointer(path: tuple[str | int, ...]) -> str:
    """RFC 6901 JSON pointer of a path ("/a/0/b")."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def json_leaves(value: Any, path: tuple[str | int, ...] = ()) -> dict[str, Any]:
    """{pointer: leaf} of a JSON value; empty objects and arrays are leaves too."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(json_leaves(v, (*path, k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(json_leaves(v, (*path, i)))
        return out
    return {_pointer(path): value}


def _expected(item: EvalItem, key: str) -> Any:
    expected = item.require(key)
    if isinstance(expected, str):
        try:
            expected = json.loads(expected)
        except json.JSONDecodeError as exc:
            raise malformed_reference(key, f"is a string that is not JSON: {exc.msg}") from exc
    return expected


@dataclass(frozen=True)
class JsonFieldMatch:
    """Field-level match of the answer's JSON against an expected JSON (reference field
    `expected_json`): each expected leaf (by JSON pointer, nested and array positions
    included) is matched when the answer has it with the same JSON type and value.
    Score: recall over expected leaves; with `extra="penalize"`, the F1 with precision
    over the answer's leaves. Details list missing, wrong-type and wrong-value fields.

    >>> from tracerl.evals.items import item_from_text
    >>> m = JsonFieldMatch()(item_from_text('{"a": {"b": 1, "c": true}}',
    ...                                     expected_json={"a": {"b": 1.0, "c": 1}, "d": 2}))
    >>> m.score, m.details["wrong_type"], m.details["missing"]
    (0.3333333333333333, ['/a/c'], ['/d'])
    """

    reference_key: str = "expected_json"
    extra: Literal["ignore", "penalize"] = "ignore"
    name: str = "json_field_match"

    def __post_init__(self) -> None:
        if self.extra not in ("ignore", "penalize"):
            raise ValueError(f"JsonFieldMatch.extra must be ignore or penalize, got {self.extra!r}")

    def __call__(self, item: EvalItem) -> MetricResult:
        want = json_leaves(_expected(item, self.reference_key))
        try:
            got = json_leaves(answer_json(item))
        except NoJson as exc:
            return MetricResult(0.0, passed=False, details={"error": str(exc)})
        missing = [p for p in want if p not in got]
        wrong_type = [p for p in want if p in got and json_type(got[p]) != json_type(want[p])]
        wrong_value = [p for p in want if p in got and p not in wrong_type
                       and not json_equal(got[p], want[p])]
        extra = [p for p in got if p not in want]
        matched = len(want) - len(missing) - len(wrong_type) - len(wrong_value)
        recall = matched / len(want)
        value = recall
        if self.extra == "penalize":
            precision = matched / len(got)
            value = 2 * precision * recall / (precision + recall) if matched else 0.0
        return MetricResult(value, passed=value == 1.0, details={
            "missing": missing, "wrong_type": wrong_type, "wrong_value": wrong_value,
            "extra": extra})


@dataclass(frozen=True)
class JsonTreeSimilarity:
    """1 - tree edit distance / size of the larger tree (clipped at 0) between the
    answer's JSON and the expected JSON (reference field `expected_json`); see
    tree_edit.py for how JSON becomes a tree. The distance is in details.

    >>> from tracerl.evals.items import item_from_text
    >>> JsonTreeSimilarity()(item_from_text('{"a": [1, 2]}', expected_json={"a": [1, 3]})).score
    0.8
    """

    reference_key: str = "expected_json"
    name: str = "json_tree_similarity"

    def __call__(self, item: EvalItem) -> MetricResult:
        want = json_postorder(_expected(item, self.reference_key))
        try:
            got = item.derived("json_tree", lambda _: json_postorder(answer_json(item)))
        except NoJson as exc:
            return MetricResult(0.0, passed=False, details={"error": str(exc)})
        dist = postorder_distance(got, want)
        value = max(0.0, 1.0 - dist / max(len(got.labels), len(want.labels)))
        return MetricResult(value, passed=dist == 0, details={"distance": dist})

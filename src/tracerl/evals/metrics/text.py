"""Answer-checking metrics on the final assistant text: exact, regex, contains, numeric,
JSON validity and JSON schema. The reference comes from a reference field
(`reference_key`, default "answer": the task's answer for training trajectories)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from tracerl.evals.fault import malformed_reference
from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult
from tracerl.evals.schema_check import is_valid_with

_NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def normalise(text: str) -> str:
    """Casefold and collapse whitespace (so "The  Answer\\n" equals "the answer")."""
    return " ".join(text.split()).casefold()


def reference_text(item: EvalItem, key: str) -> str:
    """A reference answer as text; a non-scalar or blank one cannot judge (Unjudged)."""
    ref = item.require(key)
    if isinstance(ref, (dict, list, tuple)) or not str(ref).strip():
        raise malformed_reference(key, "is not a non-empty text or number")
    return str(ref)


@dataclass(frozen=True)
class ExactMatch:
    """The answer equals the reference (casefolded, whitespace collapsed by default).
    The whole answer is compared: "Answer: 42" is not "42" unless `prefix="Answer:"`
    drops that label first (numeric_match compares the last number instead).

    >>> from tracerl.evals.items import item_from_text
    >>> ExactMatch()(item_from_text("  The  Answer ", answer="the answer"))
    True
    >>> ExactMatch(prefix="Answer:")(item_from_text("answer: 42", answer="42"))
    True
    """

    reference_key: str = "answer"
    normalize: bool = True
    prefix: str = ""
    """A label dropped from the start of the answer before comparing (e.g. "Answer:")."""
    name: str = "exact_match"

    def __call__(self, item: EvalItem) -> bool:
        out, ref = item.output_text(), reference_text(item, self.reference_key)
        if self.normalize:
            out, ref, label = normalise(out), normalise(ref), normalise(self.prefix)
        else:
            label = self.prefix
        if label and out.startswith(label):
            out = out[len(label):].strip()
        return out == ref


@dataclass(frozen=True)
class RegexMatch:
    """Does the output match `pattern` (anywhere, or in full with `full=True`)?

    >>> from tracerl.evals.items import item_from_text
    >>> RegexMatch(r"\\d{3}")(item_from_text("code 123"))
    True
    """

    pattern: str
    full: bool = False
    name: str = "regex_match"

    def __post_init__(self) -> None:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"RegexMatch.pattern {self.pattern!r} is invalid: {exc}") from exc

    def __call__(self, item: EvalItem) -> bool:
        text = item.output_text()
        found = re.fullmatch(self.pattern, text) if self.full else re.search(self.pattern, text)
        return found is not None


@dataclass(frozen=True)
class Contains:
    """Does the output contain `substring` (or the reference field when it is None)?

    >>> from tracerl.evals.items import item_from_text
    >>> Contains()(item_from_text("It is PARIS.", answer="paris"))
    True
    """

    substring: str | None = None
    reference_key: str = "answer"
    case_sensitive: bool = False
    name: str = "contains"

    def __call__(self, item: EvalItem) -> bool:
        needle = self.substring if self.substring is not None else reference_text(
            item, self.reference_key)
        text = item.output_text()
        if not self.case_sensitive:
            needle, text = needle.casefold(), text.casefold()
        return needle in text


def last_number(text: str) -> float | None:
    """The last number written in `text` ("1,234.5" -> 1234.5, "\u22123" -> -3), or None."""
    for token in reversed(_NUMBER.findall(text.replace("\u2212", "-"))):
        try:
            return float(token.replace(",", ""))
        except ValueError:
            continue
    return None


def gold_number(ref: Any, key: str) -> float:
    """The reference's number; a reference without one cannot judge (Unjudged)."""
    gold = float(ref) if isinstance(ref, (int, float)) and not isinstance(ref, bool) \
        else last_number(str(ref))
    if gold is None or not math.isfinite(gold):
        raise malformed_reference(key, "holds no finite number")
    return gold


@dataclass(frozen=True)
class NumericMatch:
    """The output's last number equals the reference within tolerances (math.isclose).

    >>> from tracerl.evals.items import item_from_text
    >>> NumericMatch()(item_from_text("The total is 1,234.0", answer=1234)).passed
    True
    """

    reference_key: str = "answer"
    rel_tol: float = 1e-6
    abs_tol: float = 1e-9
    name: str = "numeric_match"

    def __call__(self, item: EvalItem) -> MetricResult:
        ref = item.require(self.reference_key)
        gold = gold_number(ref, self.reference_key)
        got = last_number(item.output_text())
        ok = got is not None and math.isclose(got, gold, rel_tol=self.rel_tol,
                                              abs_tol=self.abs_tol)
        return MetricResult(float(ok), passed=ok, details={"output": got, "reference": gold})


def parse_json_output(text: str) -> Any:
    """The JSON value in `text`: the whole text, else the first ``` fenced block."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        fenced = _FENCE.search(text)
        if fenced is None:
            raise
        return json.loads(fenced.group(1))


def _whole_json(text: str) -> tuple[Any, str | None]:
    try:
        return parse_json_output(text), None
    except json.JSONDecodeError as exc:
        return None, exc.msg


def answer_whole_json(item: EvalItem) -> tuple[Any, str | None]:
    """(value, None) when `parse_json_output` reads the answer, else (None, the decoder's
    message); parsed once per item and shared (never mutate the value)."""
    return item.derived("json_whole", _whole_json)


@dataclass(frozen=True)
class JsonValid:
    """The whole answer, or its first fenced block, is JSON.

    >>> from tracerl.evals.items import item_from_text
    >>> JsonValid()(item_from_text('```json\\n{"a": 1}\\n```')).passed
    True
    """

    name: str = "json_valid"

    def __call__(self, item: EvalItem) -> MetricResult:
        _, error = answer_whole_json(item)
        if error is not None:
            return MetricResult(0.0, passed=False, details={"error": error})
        return MetricResult(1.0, passed=True)


@dataclass(frozen=True)
class JsonSchemaMatch:
    """The output is JSON and valid against `schema`.

    >>> from tracerl.evals.items import item_from_text
    >>> JsonSchemaMatch({"type": "array"})(item_from_text('{"a": 1}')).details["error"]
    "{'a': 1} is not of type 'array'"
    """

    schema: Mapping[str, Any]
    name: str = "json_schema"
    _validator: Any = field(init=False, repr=False, compare=False)
    _is_valid: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cls = jsonschema.validators.validator_for(self.schema)
        cls.check_schema(dict(self.schema))
        object.__setattr__(self, "_validator", cls(self.schema))
        object.__setattr__(self, "_is_valid", is_valid_with(self._validator))

    def __call__(self, item: EvalItem) -> MetricResult:
        value, error = answer_whole_json(item)
        if error is not None:
            return MetricResult(0.0, passed=False, details={"error": f"not JSON: {error}"})
        if self._is_valid(value):
            return MetricResult(1.0, passed=True)
        error = jsonschema.exceptions.best_match(self._validator.iter_errors(value))
        if error is not None:
            return MetricResult(0.0, passed=False, details={"error": error.message})
        return MetricResult(1.0, passed=True)

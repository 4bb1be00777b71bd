"""Metrics over the tool calls of a trajectory: selection, validity, efficiency, loops,
and trajectory match against reference messages."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from tracerl.evals.args_compare import ArgsOption, comparator_for
from tracerl.evals.fault import malformed_reference
from tracerl.evals.items import EvalItem
from tracerl.evals.match import MODES, Call, MatchMode, match_calls, tool_calls
from tracerl.evals.metric import MetricResult
from tracerl.evals.schema_check import is_valid_with
from tracerl.types import ToolCall


def calls_of(item: EvalItem) -> list[ToolCall]:
    return [c for t in item.trajectory.turns for c in t.tool_calls]


def output_calls(item: EvalItem) -> list[Call]:
    """The trajectory's calls as `trajectory_match` numbers them, once per item."""
    return item.memo("output_calls", lambda: tool_calls(item.messages()))


def reference_message_calls(item: EvalItem, key: str) -> list[Call]:
    """The calls of the reference messages in field `key` (`tool_calls` with
    reference=True: a malformed one is Unjudged), parsed once per item."""
    return item.memo(f"reference_calls:{key}",
                     lambda: tool_calls(item.require(key), reference=True))


def is_malformed(call: ToolCall) -> bool:
    """A call the policy wrote but that did not parse: rollouts (ToolEnv) and the JSONL
    loader record it nameless, beside a "malformed_call" ToolResult."""
    return not call.name


def _key(call: ToolCall) -> str:
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


def call_keys(item: EvalItem) -> list[list[str]]:
    """Per turn, each call's name + canonical arguments (what a repeat repeats), once
    per item."""
    return item.memo("call_keys", lambda: [[_key(c) for c in t.tool_calls]
                                           for t in item.trajectory.turns])


@dataclass(frozen=True)
class ToolSelection:
    """Were the required tools used and the forbidden ones avoided?

    Score: the fraction of constraints met (each required tool used, each forbidden
    tool not used); passed when all are.

    >>> from tracerl.evals.items import item_from_text
    >>> ToolSelection(required=("search",), forbidden=("delete",))(item_from_text("")).score
    0.5
    """

    required: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    name: str = "tool_selection"

    def __call__(self, item: EvalItem) -> MetricResult:
        used = {c.name for c in calls_of(item)}
        missing = [t for t in self.required if t not in used]
        misused = [t for t in self.forbidden if t in used]
        total = len(self.required) + len(self.forbidden)
        met = total - len(missing) - len(misused)
        return MetricResult(met / total if total else 1.0, passed=not missing and not misused,
                            details={"missing": missing, "forbidden_used": misused})


def _parameters(spec: Any) -> tuple[str, dict[str, Any]]:
    """An OpenAI tool spec {"type": "function", "function": {...}} -> (name, schema)."""
    fn = spec.get("function", spec)
    if "name" not in fn:
        raise ValueError(f"tool spec has no name: {spec!r:.200}")
    return fn["name"], fn.get("parameters", {"type": "object"})


@dataclass(frozen=True)
class ToolCallValidity:
    """Fraction of calls naming a known tool with arguments valid for its JSON schema.

    `schemas`: {tool name: parameters schema} or a list of OpenAI tool specs.
    A trajectory without calls scores 1.0 (nothing invalid), marked vacuous.

    >>> from tracerl.evals.items import item_from_text
    >>> from tracerl.types import ToolCall
    >>> it = item_from_text("")
    >>> it.trajectory.turns[0].tool_calls += [ToolCall("get", {"id": "x"})]
    >>> ToolCallValidity({"get": {"type": "object", "properties": {"id": {"type": "integer"}}}}
    ...                  )(it).details["invalid"]
    ["get: 'x' is not of type 'integer'"]
    """

    schemas: Mapping[str, Any] | Sequence[Mapping[str, Any]]
    name: str = "tool_call_validity"
    _validators: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pairs = (self.schemas.items() if isinstance(self.schemas, Mapping)
                 else (_parameters(s) for s in self.schemas))
        validators = {}
        for tool, schema in pairs:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)  # a broken schema is an error here, not a 0 score later
            validators[tool] = (validator := cls(schema)), is_valid_with(validator)
        object.__setattr__(self, "_validators", validators)

    def _problem(self, call: ToolCall) -> str | None:
        if is_malformed(call):
            return "malformed call (arguments are not a JSON object)"
        checks = self._validators.get(call.name)
        if checks is None:
            return f"unknown tool {call.name!r}"
        validator, is_valid = checks
        if is_valid(call.arguments):  # best_match finds no error exactly when valid
            return None
        error = jsonschema.exceptions.best_match(validator.iter_errors(call.arguments))
        return None if error is None else f"{call.name}: {error.message}"

    def __call__(self, item: EvalItem) -> MetricResult:
        calls = calls_of(item)
        problems = [p for c in calls if (p := self._problem(c)) is not None]
        valid = len(calls) - len(problems)
        return MetricResult(valid / len(calls) if calls else 1.0, passed=not problems,
                            details={"invalid": problems, "vacuous": not calls})


@dataclass(frozen=True)
class StepEfficiency:
    """1 - (redundant calls / calls): a call identical (name and arguments) to an earlier
    one is redundant, since its result is already in the context.

    >>> from tracerl.evals.items import item_from_text
    >>> from tracerl.types import ToolCall
    >>> it = item_from_text("")
    >>> it.trajectory.turns[0].tool_calls += [ToolCall("get", {"id": 1})] * 2
    >>> StepEfficiency()(it).score
    0.5
    """

    name: str = "step_efficiency"

    def __call__(self, item: EvalItem) -> MetricResult:
        calls = calls_of(item)
        seen: set[str] = set()
        redundant = 0
        for key in (k for keys in call_keys(item) for k in keys):
            redundant += key in seen
            seen.add(key)
        score = 1.0 - redundant / len(calls) if calls else 1.0
        return MetricResult(score, passed=redundant == 0, details={"redundant": redundant})


def _steps(item: EvalItem) -> list[str]:
    """One token per turn: its tool calls if any, else its text (what a loop repeats)."""
    return ["|".join(keys) if keys else "text:" + turn.action_text.strip()
            for turn, keys in zip(item.trajectory.turns, call_keys(item), strict=True)]


def find_loop(steps: Sequence[str], min_repeats: int, max_period: int) -> tuple[int, int, int]:
    """(start, period, repeats) of the first run of a block of `period` steps repeated
    back to back at least `min_repeats` times; (-1, 0, 0) when there is none."""
    n = len(steps)
    for start in range(n):
        for period in range(1, max_period + 1):
            repeats = 1
            while (start + (repeats + 1) * period <= n and
                   steps[start + repeats * period: start + (repeats + 1) * period]
                   == steps[start: start + period]):
                repeats += 1
            if repeats >= min_repeats:
                return start, period, repeats
    return -1, 0, 0


@dataclass(frozen=True)
class LoopDetection:
    """0.0 when the agent repeats the same block of turns `min_repeats` times in a row
    (A A A, or A B A B A B for period 2), else 1.0.

    >>> from tracerl.evals.items import item_from_text
    >>> LoopDetection()(item_from_text("thinking")).passed
    True
    """

    min_repeats: int = 3
    max_period: int = 4
    name: str = "no_loop"

    def __post_init__(self) -> None:
        if self.min_repeats < 2 or self.max_period < 1:
            raise ValueError("LoopDetection needs min_repeats >= 2 and max_period >= 1")

    def __call__(self, item: EvalItem) -> MetricResult:
        start, period, repeats = find_loop(_steps(item), self.min_repeats, self.max_period)
        looped = start >= 0
        return MetricResult(0.0 if looped else 1.0, passed=not looped,
                            details={"start": start, "period": period, "repeats": repeats})


@dataclass(frozen=True)
class TrajectoryMatch:
    """trajectory_match against the messages in reference field `reference_key`;
    score = 1.0/0.0 for passed, or the F1 of the call pairing with `score="f1"`.

    >>> from tracerl.evals.items import item_from_text
    >>> ref = [{"role": "assistant", "content": "", "tool_calls": [
    ...     {"id": "1", "type": "function", "function": {"name": "get", "arguments": "{}"}}]}]
    >>> TrajectoryMatch()(item_from_text("", reference_messages=ref)).details["missing"]
    ['get']
    """

    mode: MatchMode = "strict"
    args: ArgsOption = "exact"
    reference_key: str = "reference_messages"
    score: str = "passed"
    name: str = "trajectory_match"
    _cmp_for: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.score not in ("passed", "f1"):
            raise ValueError(f"TrajectoryMatch.score must be 'passed' or 'f1', got {self.score!r}")
        if self.mode not in MODES:
            raise ValueError(f"trajectory_match mode must be one of {MODES}, got {self.mode!r}")
        object.__setattr__(self, "_cmp_for", comparator_for(self.args))

    def __call__(self, item: EvalItem) -> MetricResult:
        reference = item.require(self.reference_key)
        if not isinstance(reference, (list, tuple)):
            raise malformed_reference(self.reference_key, "is not a list of messages")
        result = match_calls(output_calls(item), reference_message_calls(item, self.reference_key),
                             self.mode, self._cmp_for)
        value = result.f1 if self.score == "f1" else float(result.passed)
        return MetricResult(value, passed=result.passed, details={
            "precision": result.precision, "recall": result.recall, "f1": result.f1,
            "missing": [c.name for c in result.missing], "extra": [c.name for c in result.extra],
            "vacuous": result.vacuous, "reason": result.reason})

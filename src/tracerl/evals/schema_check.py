"""A fast validity check for the JSON schemas tool definitions and datasets mostly use.

`jsonschema` walks a schema keyword by keyword through generic machinery (about 30 us
for a three-property object); the metrics that only need *whether* a value is valid ask
`validity_check(validator)` instead, which compiles a schema made only of `type`,
`properties`, `required`, `items` (one schema), `additionalProperties` (a boolean or a
schema) and annotations (`title`, `description`, `default`, `examples`, `$comment`, a
root `$schema`) into a plain tree walk with jsonschema's exact semantics for those
keywords in drafts 6 to 2020-12 (types as its type checkers define them: a bool is
not an integer nor a number, 1.0 is an integer; object keywords ignore non-objects,
`items` ignores non-arrays). Any other keyword, any other draft, a boolean or
non-dict subschema: None, and the caller asks jsonschema. Error messages and partial
credit always come from jsonschema; tests hold the two to the same verdicts on random
values and schemas.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$comment"})
_KEYWORDS = _ANNOTATIONS | {"type", "properties", "required", "items", "additionalProperties"}
_DRAFTS = (jsonschema.Draft6Validator, jsonschema.Draft7Validator,
           jsonschema.Draft201909Validator, jsonschema.Draft202012Validator)


def _is_integer(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


def _is_number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, numbers.Number)


_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "array": lambda x: isinstance(x, list),
    "boolean": lambda x: isinstance(x, bool),
    "integer": _is_integer,
    "null": lambda x: x is None,
    "number": _is_number,
    "object": lambda x: isinstance(x, dict),
    "string": lambda x: isinstance(x, str),
}


@dataclass(frozen=True)
class _Node:
    """One (sub)schema, compiled."""

    types: tuple[Callable[[Any], bool], ...] | None
    required: tuple[Any, ...]
    properties: tuple[tuple[Any, _Node], ...]
    names: frozenset[Any]
    items: _Node | None
    additional: bool | _Node

    def valid(self, x: Any) -> bool:
        if self.types is not None and not any(t(x) for t in self.types):
            return False
        if isinstance(x, dict):
            for key in self.required:
                if key not in x:
                    return False
            for key, sub in self.properties:
                if key in x and not sub.valid(x[key]):
                    return False
            if self.additional is not True:
                extras = [v for k, v in x.items() if k not in self.names]
                if extras and (self.additional is False
                               or not all(self.additional.valid(v) for v in extras)):
                    return False
        elif isinstance(x, list) and self.items is not None:
            for v in x:
                if not self.items.valid(v):
                    return False
        return True


def _compile(schema: Any) -> _Node | None:
    if not isinstance(schema, dict) or not schema.keys() <= _KEYWORDS:
        return None
    types = None
    if "type" in schema:
        names = schema["type"]
        names = [names] if isinstance(names, str) else names
        if not isinstance(names, list) or any(
                not isinstance(n, str) or n not in _TYPE_TESTS for n in names):
            return None
        types = tuple(_TYPE_TESTS[n] for n in names)
    required = schema.get("required", [])
    props = schema.get("properties", {})
    if not isinstance(required, list) or not isinstance(props, dict):
        return None
    compiled = {k: _compile(sub) for k, sub in props.items()}
    items = _compile(schema["items"]) if "items" in schema else None
    additional: Any = schema.get("additionalProperties", True)
    if isinstance(additional, dict):
        additional = _compile(additional)
    elif not isinstance(additional, bool):
        return None
    if (any(c is None for c in compiled.values()) or additional is None
            or ("items" in schema and items is None)):
        return None
    return _Node(types, tuple(required), tuple(compiled.items()), frozenset(props), items,
                 additional)


def validity_check(validator: Any) -> Callable[[Any], bool] | None:
    """`validator.is_valid`'s verdicts by a compiled walk, for a schema of the keywords
    this module knows; None for any other (ask the validator)."""
    if type(validator) not in _DRAFTS or not isinstance(validator.schema, Mapping):
        return None
    schema = {k: v for k, v in validator.schema.items() if k != "$schema"}
    node = _compile(schema)
    return None if node is None else node.valid


def is_valid_with(validator: Any) -> Callable[[Any], bool]:
    """The fastest exact validity test for `validator`'s schema."""
    return validity_check(validator) or validator.is_valid

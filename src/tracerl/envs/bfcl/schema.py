"""BFCL function docs as the agent's tools: OpenAI function-calling JSON schemas.

BFCL writes its docs in a Python-flavoured dialect of JSON schema: `dict` for objects,
`float` for numbers, `tuple` for fixed sequences, `any`, and `optional: true` beside a
parameter that is simply absent from `required`. The conversion keeps everything BFCL's
checker relies on and changes only the type names:

    dict -> object    float -> number    tuple -> array    any -> string

`any` becomes `string` because that is what BFCL's checker accepts for it (its Python
type table maps `any` to `str`) and what BFCL's own OpenAI-format conversion sends;
offering "any JSON value" would invite answers the checker then fails. `required` is
kept as given (a parameter not in it stays optional, whatever `optional` says; that key
is dropped), `enum`, `default`, `format`, `maximum`, `minItems` ... are kept as they are.

`validation_schema` is the structure of that schema (types, required parameters, no
unknown ones): what a call is checked against before it runs on a simulator
(envs/bfcl/env.py).
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema

TYPE_NAMES = {"dict": "object", "float": "number", "tuple": "array", "any": "string",
              "string": "string", "integer": "integer", "boolean": "boolean",
              "array": "array", "number": "number", "object": "object"}
"""BFCL type names (those its Python and multi-turn data use) -> JSON schema types."""


class SchemaError(ValueError):
    """A BFCL function doc that cannot be converted (names the function and the field)."""


def _convert(node: Any, where: str) -> Any:
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k != "optional"}
    if "type" in out:
        name = out["type"]
        if name not in TYPE_NAMES:
            raise SchemaError(f"{where}: BFCL type {name!r} has no JSON schema type "
                              f"(known: {sorted(TYPE_NAMES)})")
        out["type"] = TYPE_NAMES[name]
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _convert(v, f"{where}.{k}") for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = _convert(out["items"], f"{where}[]")
    return out


def tool_schema(doc: dict[str, Any]) -> dict[str, Any]:
    """One BFCL function doc -> `{"type": "function", "function": {...}}`."""
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise SchemaError(f"BFCL function doc without a name: {str(doc)[:120]}")
    params = _convert(copy.deepcopy(doc.get("parameters") or {"type": "dict"}), name)
    params["type"] = "object"
    params.setdefault("properties", {})
    params["required"] = list(params.get("required", []))
    return {"type": "function", "function": {
        "name": name, "description": doc.get("description", ""), "parameters": params}}


VALUE_KEYWORDS = frozenset({"enum", "const", "format", "pattern", "minimum", "maximum",
                            "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems",
                            "minLength", "maxLength"})
"""Constraints on values that BFCL's checker never reads (its accepted answers break
some enums), so a call is not refused for them; the simulator judges the value."""


def _structure(node: Any) -> Any:
    """A schema node without VALUE_KEYWORDS (properties may be *named* like them)."""
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k not in VALUE_KEYWORDS}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _structure(v) for k, v in out["properties"].items()}
    if "items" in out:
        out["items"] = _structure(out["items"])
    return out


def validation_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The parameters schema a call's arguments must satisfy: types, required and no
    unknown parameters (value constraints left out: VALUE_KEYWORDS)."""
    params = _structure(schema["function"]["parameters"])
    params["additionalProperties"] = False
    return params


def argument_error(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """Why `arguments` do not fit the tool's schema, or None when they do."""
    validator = jsonschema.Draft7Validator(validation_schema(schema))
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    path = ".".join(str(p) for p in error.absolute_path)
    return f"{path}: {error.message}" if path else error.message

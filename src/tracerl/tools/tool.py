"""`@tool`: a typed Python callable whose JSON schema comes from its signature and docstring.

The schema is the OpenAI function-calling shape (`{"type": "function", "function":
{"name", "description", "parameters"}}`). Arguments are validated against the
signature before the call, so a wrong type becomes a readable error for the agent
instead of an exception deep inside the tool.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
import types
import typing
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

_JSON_TYPES: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
}


class ToolArgumentError(ValueError):
    """The arguments of a call do not fit the tool's signature."""


def _json_type(annotation: Any) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(options) == 1:
            return _json_type(options[0])
        return {"anyOf": [_json_type(a) for a in options]}
    if origin is typing.Literal:
        values = list(typing.get_args(annotation))
        return {"type": _JSON_TYPES.get(type(values[0]), "string"), "enum": values}
    if origin in (list, tuple):
        args = typing.get_args(annotation)
        schema: dict[str, Any] = {"type": "array"}
        if args and args[0] is not Ellipsis:
            schema["items"] = _json_type(args[0])
        return schema
    if origin is dict:
        return {"type": "object"}
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    raise TypeError(f"cannot derive a JSON schema for annotation {annotation!r}")


def _param_docs(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its summary and `Args:` descriptions."""
    summary_lines, params, current = [], {}, None
    in_args = False
    for raw in doc.splitlines():
        line = raw.strip()
        if line.lower() in ("args:", "arguments:", "parameters:"):
            in_args = True
            continue
        if in_args and re.match(r"^(returns|raises|yields|examples?):$", line.lower()):
            in_args = False
            continue
        if in_args:
            m = re.match(r"^(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
            if m:
                current = m.group(1)
                params[current] = m.group(3)
            elif current and line:
                params[current] += " " + line
        elif line:
            summary_lines.append(line)
    return " ".join(summary_lines), params


def _check_value(name: str, value: Any, annotation: Any) -> Any:
    """Check (and gently coerce int -> float) one argument against its annotation."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(annotation):
            try:
                return _check_value(name, value, option)
            except ToolArgumentError:
                continue
        raise ToolArgumentError(f"argument {name!r}: {value!r} matches none of {annotation}")
    if annotation is type(None):
        if value is None:
            return None
        raise ToolArgumentError(f"argument {name!r} must be null, got {value!r}")
    if origin is typing.Literal:
        if value in typing.get_args(annotation):
            return value
        raise ToolArgumentError(f"argument {name!r} must be one of {typing.get_args(annotation)}")
    base = origin or annotation
    if base is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if base in _JSON_TYPES and not isinstance(value, base) or (
        base in (int, float) and isinstance(value, bool)
    ):
        expected = _JSON_TYPES.get(base, str(base))
        raise ToolArgumentError(
            f"argument {name!r} must be {expected}, got {type(value).__name__} {value!r}"
        )
    return value


TOOL_THREADS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="tracerl-tool")
"""Where sync tools run. asyncio's default pool has min(32, cores + 4) threads (6 on two
cores), so 64 episodes calling a blocking API would queue; a tool's timeout still
applies (ToolEnvConfig.tool_timeout_s), though Python cannot kill the thread it leaves."""


@dataclass(frozen=True)
class Tool:
    """A callable the agent may invoke, with its JSON schema."""

    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Any]
    hints: dict[str, Any] = field(repr=False, default_factory=dict)
    required: tuple[str, ...] = ()

    @property
    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Return checked arguments or raise ToolArgumentError naming the problem."""
        if not isinstance(arguments, dict):
            raise ToolArgumentError(f"arguments must be a JSON object, got {arguments!r}")
        unknown = sorted(set(arguments) - set(self.hints))
        if unknown:
            raise ToolArgumentError(
                f"unknown argument(s) {unknown} for tool {self.name!r}; "
                f"expected {sorted(self.hints)}"
            )
        missing = [p for p in self.required if p not in arguments]
        if missing:
            raise ToolArgumentError(f"missing required argument(s) {missing} for {self.name!r}")
        return {k: _check_value(k, v, self.hints[k]) for k, v in arguments.items()}

    async def acall(self, arguments: dict[str, Any]) -> Any:
        """Call with validated arguments; sync tools run in the tool thread pool."""
        args = self.validate(arguments)
        if inspect.iscoroutinefunction(self.fn):
            return await self.fn(**args)
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(TOOL_THREADS, functools.partial(self.fn, **args))
        if inspect.isawaitable(result):
            return await typing.cast(Awaitable[Any], result)
        return result


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None) -> Any:
    """Decorate a typed function as a Tool: `@tool` or `@tool(name="...")`."""

    def wrap(f: Callable[..., Any]) -> Tool:
        sig = inspect.signature(f)
        hints = typing.get_type_hints(f)
        summary, docs = _param_docs(inspect.getdoc(f) or "")
        props: dict[str, Any] = {}
        required: list[str] = []
        for pname, param in sig.parameters.items():
            if pname not in hints:
                raise TypeError(f"tool {f.__name__!r}: parameter {pname!r} has no type hint")
            props[pname] = _json_type(hints[pname])
            if pname in docs:
                props[pname]["description"] = docs[pname]
            if param.default is inspect.Parameter.empty:
                required.append(pname)
        params = {"type": "object", "properties": props, "required": required}
        arg_hints = {k: v for k, v in hints.items() if k != "return"}
        return Tool(name or f.__name__, summary, params, f, arg_hints, tuple(required))

    return wrap(fn) if fn is not None else wrap

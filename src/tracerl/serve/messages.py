"""The shapes inside a chat request, checked strictly: messages, their content parts and
tool calls, tool schemas and `tool_choice`.

Threat model: any client (or a careless one) sends any JSON. Everything a later step
renders, tokenizes or records is checked here for its exact type first, so a wrong
shape is a 400 naming the field (OpenAI's `param`) instead of an exception deep in the
chat template (a 500, issue 32): `tool_calls` holding strings, `function` given as a
string, a tool name of another type, arguments that are not a JSON object.

Content parts: text (and an assistant's `refusal`) parts are joined; parts the served
model cannot take (images, audio, files) are refused with 400
`code: unsupported_content` rather than dropped silently, since the model would answer
a question it never saw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tracerl.serve.errors import bad
from tracerl.types import Message, ToolCall

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
ROLES = ("system", "developer", "user", "assistant", "tool")
TEXT_PARTS = ("text", "refusal")

ToolChoice = Literal["none", "auto", "required"] | str
""""none", "auto", "required", or the name of the one function that must be called."""


def _opt_str(m: dict[str, Any], key: str, where: str) -> str | None:
    value = m.get(key)
    if value is not None and not isinstance(value, str):
        raise bad(f"{where}.{key} must be a string, got {type(value).__name__}",
                  f"{where}.{key}")
    return value


def _content(raw: Any, where: str) -> str:
    """A message's content as text: a string, null, or an array of text parts."""
    if raw is None or isinstance(raw, str):
        return raw or ""
    if not isinstance(raw, list):
        raise bad(f"{where}.content must be a string, an array of parts or null, got "
                  f"{type(raw).__name__}", f"{where}.content")
    texts = []
    for j, part in enumerate(raw):
        at = f"{where}.content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(kind, str):
            raise bad(f"{at} must be an object with a 'type'", at)
        if kind not in TEXT_PARTS:
            raise bad(f"{at}: content parts of type {kind!r} are not supported: the served "
                      "model takes text only", at, "unsupported_content")
        text = part.get(kind)
        if not isinstance(text, str):
            raise bad(f"{at}.{kind} must be a string", f"{at}.{kind}")
        texts.append(text)
    return "".join(texts)


def _tool_call(raw: Any, where: str) -> ToolCall:
    fn = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(fn, dict):
        raise bad(f"{where} must be {{'type': 'function', 'function': {{'name', "
                  "'arguments'}}", where)
    name, args = fn.get("name"), fn.get("arguments", "{}")
    if not isinstance(name, str) or not name:
        raise bad(f"{where}.function.name must be a non-empty string", f"{where}.function.name")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            raise bad(f"{where}.function.arguments is not valid JSON",
                      f"{where}.function.arguments") from None
    if not isinstance(args, dict):
        raise bad(f"{where}.function.arguments must encode a JSON object",
                  f"{where}.function.arguments")
    call_id = raw.get("id", "")
    if not isinstance(call_id, str):
        raise bad(f"{where}.id must be a string", f"{where}.id")
    return ToolCall(name=name, arguments=args, id=call_id)


def parse_message(m: Any, where: str) -> Message:
    """One OpenAI message dict -> Message (`developer` is read as `system`)."""
    if not isinstance(m, dict):
        raise bad(f"{where} must be an object, got {type(m).__name__}", where)
    role = m.get("role")
    if role not in ROLES:
        raise bad(f"{where}.role must be one of {', '.join(ROLES)}, got {role!r}",
                  f"{where}.role")
    calls = m.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise bad(f"{where}.tool_calls must be an array of tool calls, got "
                  f"{type(calls).__name__}", f"{where}.tool_calls")
    if calls and role != "assistant":
        raise bad(f"{where}: only assistant messages carry tool_calls", f"{where}.tool_calls")
    return Message(role="system" if role == "developer" else role,
                   content=_content(m.get("content"), where),
                   tool_calls=tuple(_tool_call(c, f"{where}.tool_calls[{k}]")
                                    for k, c in enumerate(calls or ())),
                   tool_call_id=_opt_str(m, "tool_call_id", where),
                   name=_opt_str(m, "name", where))


def parse_messages(raw: Any) -> tuple[Message, ...]:
    """The request's `messages`, each checked (see the module docstring)."""
    if not isinstance(raw, list) or not raw:
        raise bad("'messages' must be a non-empty array of message objects", "messages")
    return tuple(parse_message(m, f"messages[{i}]") for i, m in enumerate(raw))


def _parameters(fn: dict[str, Any], where: str) -> dict[str, Any]:
    params = fn.get("parameters", {"type": "object", "properties": {}})
    at = f"{where}.function.parameters"
    if not isinstance(params, dict):
        raise bad(f"{at} must be a JSON Schema object", at)
    try:
        Draft202012Validator.check_schema(params)
    except SchemaError as e:
        raise bad(f"{at} is not a valid JSON Schema: {e.message}", at) from e
    except RecursionError:
        raise bad(f"{at} is nested too deeply", at) from None
    if params.get("type", "object") != "object":
        raise bad(f"{at} must describe an object (type 'object')", at)
    return params


def parse_tools(raw: Any) -> tuple[dict[str, Any], ...]:
    """Function-tool schemas, each checked: a valid name, a string description (if any)
    and a JSON Schema object."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise bad("'tools' must be an array of tool objects", "tools")
    out, seen = [], set()
    for i, t in enumerate(raw):
        where = f"tools[{i}]"
        if not isinstance(t, dict) or t.get("type") != "function" or \
                not isinstance(t.get("function"), dict):
            raise bad(f"{where} must be {{'type': 'function', 'function': {{...}}}}", where)
        fn = t["function"]
        name = fn.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.match(name):
            raise bad(f"{where}.function.name must match ^[A-Za-z0-9_-]{{1,64}}$, got {name!r}",
                      f"{where}.function.name")
        if name in seen:
            raise bad(f"{where}: two tools are named {name!r}", f"{where}.function.name")
        seen.add(name)
        _opt_str(fn, "description", f"{where}.function")
        out.append({"type": "function", "function": dict(fn, parameters=_parameters(fn, where))})
    return tuple(out)


def parse_tool_choice(raw: Any, tools: Sequence[dict[str, Any]]) -> ToolChoice:
    """"none", "auto" (the default), "required", or a function's name."""
    if raw is None:
        return "auto"
    if isinstance(raw, str) and raw in ("none", "auto", "required"):
        if raw == "required" and not tools:
            raise bad("tool_choice 'required' needs 'tools'", "tool_choice")
        return raw
    fn = raw.get("function") if isinstance(raw, dict) else None
    name = fn.get("name") if isinstance(fn, dict) else None
    if not isinstance(name, str):
        raise bad("'tool_choice' must be 'none', 'auto', 'required' or "
                  "{'type': 'function', 'function': {'name': ...}}", "tool_choice")
    if name not in {t["function"]["name"] for t in tools}:
        raise bad(f"tool_choice names {name!r}, which is not in 'tools'", "tool_choice")
    return name

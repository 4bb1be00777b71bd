"""Hermes-style tool calls: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

This is the format Qwen-family chat templates use. Parsing never raises: a block that
is not valid JSON, or not of the `{name, arguments}` shape, is returned as a
`MalformedCall` so the env can answer with a readable error observation.

`describe_tools` is the default tool prompt: the system text that tells a model whose
chat template has no tool support (SmolLM2's ignores `tools=`) which tools exist and
how to call them in this format.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tracerl.types import ToolCall

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_BLOCK = re.compile(re.escape(OPEN) + r"(.*?)(?:" + re.escape(CLOSE) + r"|$)", re.DOTALL)


@dataclass(frozen=True)
class MalformedCall:
    """A `<tool_call>` block that could not be parsed, with the reason."""

    text: str
    reason: str


@dataclass(frozen=True)
class ParsedAction:
    """An assistant action split into plain text, tool calls and malformed blocks."""

    content: str
    calls: list[ToolCall] = field(default_factory=list)
    malformed: list[MalformedCall] = field(default_factory=list)

    @property
    def has_tool_use(self) -> bool:
        return bool(self.calls or self.malformed)


def _parse_block(body: str, closed: bool, index: int) -> ToolCall | MalformedCall:
    if not closed:
        return MalformedCall(body, f"unterminated {OPEN}: expected {CLOSE}")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as e:
        return MalformedCall(body, f"invalid JSON in tool call: {e.msg} at position {e.pos}")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return MalformedCall(body, 'tool call must be a JSON object with a string "name"')
    args = data.get("arguments", {})
    if isinstance(args, str):  # some models emit arguments as a JSON string
        try:
            args = json.loads(args)
        except json.JSONDecodeError:
            return MalformedCall(body, '"arguments" is a string that is not valid JSON')
    if not isinstance(args, dict):
        return MalformedCall(body, '"arguments" must be a JSON object')
    return ToolCall(name=data["name"], arguments=args, id=f"call_{index}")


def parse_tool_calls(text: str) -> ParsedAction:
    """Split `text` into content outside tool-call blocks and the parsed blocks."""
    calls: list[ToolCall] = []
    malformed: list[MalformedCall] = []
    for i, m in enumerate(_BLOCK.finditer(text)):
        closed = m.group(0).endswith(CLOSE)
        parsed = _parse_block(m.group(1).strip(), closed, i)
        (calls if isinstance(parsed, ToolCall) else malformed).append(parsed)  # type: ignore[arg-type]
    content = _BLOCK.sub("", text).strip()
    return ParsedAction(content=content, calls=calls, malformed=malformed)


def format_tool_call(call: ToolCall) -> str:
    """The canonical text of a call, as demonstrations write it."""
    body = json.dumps({"name": call.name, "arguments": call.arguments})
    return f"{OPEN}{body}{CLOSE}"


def describe_tools(schemas: Sequence[Mapping[str, Any]]) -> str:
    """The default tool prompt for `schemas` (OpenAI function-calling JSON schemas),
    worded like the Hermes / Qwen2.5 templates that models are tuned on."""
    listing = "\n".join(json.dumps(s) for s in schemas)
    return (
        "# Tools\n\n"
        "You may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{listing}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments "
        "within <tool_call></tool_call> XML tags:\n"
        f'{OPEN}{{"name": <function-name>, "arguments": <args-json-object>}}{CLOSE}'
    )

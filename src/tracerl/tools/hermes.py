"""Hermes-style tool calls: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

This is the format Qwen-family chat templates use. SmolLM2's instruct data taught a
variant (the system prompt it was tuned with asks for it; tests/tools/
smollm2_tool_calls.json holds the model's real outputs): a JSON list of such objects in
one block, `<tool_call>[{"name": ...}, {"name": ...}]</tool_call>`, where the empty list
`[]` means "no call is needed". Both are parsed: each object of a list is a call (or a
`MalformedCall` of its own), an empty list is no call.

Parsing never raises: a block that is not valid JSON, or not of the `{name, arguments}`
shape, is returned as a `MalformedCall` so the env can answer with a readable error
observation.

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


def _parse_call(data: object, body: str, index: int) -> ToolCall | MalformedCall:
    """One `{name, arguments}` object (`body` is the text it came from, for errors)."""
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


def _parse_block(body: str, closed: bool, index: int) -> list[ToolCall | MalformedCall]:
    """The calls of one block: one object, or each object of a JSON list (SmolLM2's
    form; `[]` is no call). Ids count calls across the whole action from `index`."""
    if not closed:
        return [MalformedCall(body, f"unterminated {OPEN}: expected {CLOSE}")]
    try:
        data = json.loads(body)
    except json.JSONDecodeError as e:
        return [MalformedCall(body, f"invalid JSON in tool call: {e.msg} at position {e.pos}")]
    if not isinstance(data, list):
        return [_parse_call(data, body, index)]
    return [_parse_call(item, json.dumps(item), index + k) for k, item in enumerate(data)]


def parse_tool_calls(text: str) -> ParsedAction:
    """Split `text` into content outside tool-call blocks and the parsed blocks."""
    calls: list[ToolCall] = []
    malformed: list[MalformedCall] = []
    count = 0
    for m in _BLOCK.finditer(text):
        closed = m.group(0).endswith(CLOSE)
        for parsed in _parse_block(m.group(1).strip(), closed, count):
            if isinstance(parsed, ToolCall):
                calls.append(parsed)
            else:
                malformed.append(parsed)
            count += 1
    content = _BLOCK.sub("", text).strip()
    return ParsedAction(content=content, calls=calls, malformed=malformed)


def format_tool_call(call: ToolCall) -> str:
    """The canonical text of a call, as demonstrations write it."""
    body = json.dumps({"name": call.name, "arguments": call.arguments})
    return f"{OPEN}{body}{CLOSE}"


def format_tool_call_list(calls: Sequence[ToolCall]) -> str:
    """Several calls as one block in SmolLM2's list form, `<tool_call>[{...}, ...]</tool_call>`
    (parsed back call by call, ids in order)."""
    body = json.dumps([{"name": c.name, "arguments": c.arguments} for c in calls])
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

"""The OpenAI chat-completions wire format: requests parsed and checked, errors, replies.

`parse_request(body)` turns a request body into a typed `ChatRequest` or raises
`APIError` naming the field that was wrong (the `param` of OpenAI's error body). What is
accepted, what is ignored and what is refused:

- used: `model`, `messages`, `tools`, `tool_choice`, `temperature`, `top_p`, `n`,
  `max_tokens` / `max_completion_tokens`, `stop`, `stream`, `stream_options.include_usage`,
  `logprobs`, and the recording fields `episode_id` / `task_id` (sent with the openai
  client as `extra_body={...}`; the `X-Episode-Id` / `X-Task-Id` headers work too);
- refused with 400, since honouring them would change what is sampled and ignoring
  them would be silent: non-zero `presence_penalty` / `frequency_penalty`, a non-empty
  `logit_bias`, `top_logprobs` > 0, a `response_format` other than text;
- ignored (they change nothing here): `seed` (one sampler serves every request),
  `user`, `metadata`, `store`, `parallel_tool_calls`, `service_tier` and unknown keys.

Nothing here imports torch or the web framework.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tracerl.types import Message, ToolCall

_TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_STOPS = 4


class APIError(Exception):
    """An error the client gets as an OpenAI error body with this HTTP status."""

    def __init__(self, status: int, message: str, *, param: str | None = None,
                 code: str | None = None, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.kind = kind

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param,
                          "code": self.code}}


def bad(message: str, param: str | None = None, code: str | None = None) -> APIError:
    return APIError(400, message, param=param, code=code)


ToolChoice = Literal["none", "auto", "required"] | str
""""none", "auto", "required", or the name of the one function that must be called."""


@dataclass(frozen=True)
class ChatRequest:
    """One `/v1/chat/completions` request, checked."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: ToolChoice = "auto"
    temperature: float = 1.0
    top_p: float = 1.0
    n: int = 1
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    stream: bool = False
    include_usage: bool = False
    logprobs: bool = False
    episode_id: str | None = None
    task_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def _number(body: Mapping[str, Any], key: str, default: float, low: float, high: float,
            low_open: bool = False) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad(f"'{key}' must be a number, got {value!r}", key)
    if value > high or value < low or (low_open and value == low):
        side = "(" if low_open else "["
        raise bad(f"'{key}' must be in {side}{low}, {high}], got {value}", key)
    return float(value)


def _int(body: Mapping[str, Any], key: str, low: int, high: int | None = None) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad(f"'{key}' must be an integer, got {value!r}", key)
    if value < low or (high is not None and value > high):
        upper = f" and <= {high}" if high is not None else ""
        raise bad(f"'{key}' must be >= {low}{upper}, got {value}", key)
    return value


def parse_messages(raw: Any) -> tuple[Message, ...]:
    """OpenAI message dicts -> Messages (`developer` is read as `system`)."""
    if not isinstance(raw, list) or not raw:
        raise bad("'messages' must be a non-empty array of message objects", "messages")
    out = []
    for i, m in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(m, dict):
            raise bad(f"{where} must be an object, got {type(m).__name__}", where)
        if m.get("role") == "developer":
            m = dict(m, role="system")
        content = m.get("content")
        if content is not None and not isinstance(content, str | list):
            raise bad(f"{where}.content must be a string, an array of parts or null",
                      f"{where}.content")
        try:
            out.append(Message.from_openai(m))
        except (ValueError, TypeError, KeyError) as e:
            raise bad(f"{where}: {e}", where) from e
    return tuple(out)


def parse_tools(raw: Any) -> tuple[dict[str, Any], ...]:
    """Function-tool schemas, each checked: a valid name and a JSON Schema object."""
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
        params = fn.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict):
            raise bad(f"{where}.function.parameters must be a JSON Schema object",
                      f"{where}.function.parameters")
        try:
            Draft202012Validator.check_schema(params)
        except SchemaError as e:
            raise bad(f"{where}.function.parameters is not a valid JSON Schema: {e.message}",
                      f"{where}.function.parameters") from e
        if params.get("type", "object") != "object":
            raise bad(f"{where}.function.parameters must describe an object (type 'object')",
                      f"{where}.function.parameters")
        out.append({"type": "function", "function": dict(fn, parameters=params)})
    return tuple(out)


def _tool_choice(raw: Any, tools: Sequence[dict[str, Any]]) -> ToolChoice:
    if raw is None:
        return "auto"
    if raw in ("none", "auto", "required"):
        if raw == "required" and not tools:
            raise bad("tool_choice 'required' needs 'tools'", "tool_choice")
        return str(raw)
    name = raw.get("function", {}).get("name") if isinstance(raw, dict) else None
    if not isinstance(name, str):
        raise bad("'tool_choice' must be 'none', 'auto', 'required' or "
                  "{'type': 'function', 'function': {'name': ...}}", "tool_choice")
    if name not in {t["function"]["name"] for t in tools}:
        raise bad(f"tool_choice names {name!r}, which is not in 'tools'", "tool_choice")
    return name


def _stop(raw: Any) -> tuple[str, ...]:
    if raw is None:
        return ()
    stops = [raw] if isinstance(raw, str) else raw
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise bad("'stop' must be a non-empty string or an array of them", "stop")
    if len(stops) > MAX_STOPS:
        raise bad(f"'stop' takes at most {MAX_STOPS} sequences, got {len(stops)}", "stop")
    return tuple(stops)


def _refuse_unsupported(body: Mapping[str, Any]) -> None:
    for key in ("presence_penalty", "frequency_penalty"):
        if body.get(key) not in (None, 0, 0.0):
            raise bad(f"'{key}' is not supported (only 0)", key, "unsupported_parameter")
    if body.get("logit_bias"):
        raise bad("'logit_bias' is not supported", "logit_bias", "unsupported_parameter")
    if body.get("top_logprobs") not in (None, 0):
        raise bad("'top_logprobs' is not supported (only 0)", "top_logprobs",
                  "unsupported_parameter")
    fmt = body.get("response_format")
    if fmt is not None and (not isinstance(fmt, dict) or fmt.get("type") != "text"):
        raise bad("only response_format {'type': 'text'} is supported", "response_format",
                  "unsupported_parameter")


def _optional_str(body: Mapping[str, Any], key: str, header: str | None) -> str | None:
    value = body.get(key, header)
    if value is not None and (not isinstance(value, str) or not value):
        raise bad(f"'{key}' must be a non-empty string", key)
    return value


def parse_request(body: Any, headers: Mapping[str, str] | None = None,
                  max_n: int = 16) -> ChatRequest:
    """A checked ChatRequest from a decoded JSON body (and the recording headers)."""
    if not isinstance(body, dict):
        raise bad("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise bad("'model' must be a non-empty string", "model")
    _refuse_unsupported(body)
    tools = parse_tools(body.get("tools"))
    max_tokens = _int(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = _int(body, "max_tokens", 1)
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise bad("'stream_options' must be an object", "stream_options")
    metadata = body.get("metadata") or {}
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    return ChatRequest(
        model=model, messages=parse_messages(body.get("messages")), tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice"), tools),
        temperature=_number(body, "temperature", 1.0, 0.0, 2.0),
        top_p=_number(body, "top_p", 1.0, 0.0, 1.0, low_open=True),
        n=_int(body, "n", 1, max_n) or 1, max_tokens=max_tokens, stop=_stop(body.get("stop")),
        stream=bool(body.get("stream", False)),
        include_usage=bool(options.get("include_usage", False)),
        logprobs=bool(body.get("logprobs", False)),
        episode_id=_optional_str(body, "episode_id", headers.get("x-episode-id")),
        task_id=_optional_str(body, "task_id", headers.get("x-task-id")),
        metadata=metadata if isinstance(metadata, dict) else {})


# -- replies ----------------------------------------------------------------------------

def reply_message(content: str, calls: Sequence[ToolCall]) -> dict[str, Any]:
    """The assistant message of one choice, OpenAI style (content null beside calls)."""
    out: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        out["tool_calls"] = [c.to_openai() for c in calls]
    elif out["content"] is None:
        out["content"] = ""
    return out


@dataclass(frozen=True)
class Choice:
    """One sampled choice, ready to send."""

    content: str
    calls: tuple[ToolCall, ...]
    finish_reason: Literal["stop", "length", "tool_calls"]
    tokens: tuple[str, ...] = ()
    logprobs: tuple[float, ...] = ()


def completion_body(cid: str, model: str, choices: Sequence[Choice], prompt_tokens: int,
                    completion_tokens: int, logprobs: bool, fingerprint: str) -> dict[str, Any]:
    return {
        "id": cid, "object": "chat.completion", "created": int(time.time()), "model": model,
        "system_fingerprint": fingerprint,
        "choices": [{
            "index": i, "message": reply_message(c.content, c.calls),
            "logprobs": _logprobs(c) if logprobs else None,
            "finish_reason": c.finish_reason,
        } for i, c in enumerate(choices)],
        "usage": usage(prompt_tokens, completion_tokens),
    }


def _logprobs(c: Choice) -> dict[str, Any]:
    return {"content": [{"token": t, "logprob": lp, "bytes": list(t.encode()),
                         "top_logprobs": []} for t, lp in zip(c.tokens, c.logprobs,
                                                              strict=True)]}


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def chunk_body(cid: str, model: str, fingerprint: str, index: int | None,
               delta: dict[str, Any] | None = None, finish_reason: str | None = None,
               usage_of: dict[str, int] | None = None) -> dict[str, Any]:
    """One `chat.completion.chunk`; `index` None gives the usage chunk (no choices)."""
    choices = [] if index is None else [{"index": index, "delta": delta or {},
                                         "logprobs": None, "finish_reason": finish_reason}]
    out: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk",
                           "created": int(time.time()), "model": model,
                           "system_fingerprint": fingerprint, "choices": choices}
    if usage_of is not None:
        out["usage"] = usage_of
    return out


def tool_call_deltas(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    """The streamed form of complete tool calls (one delta each, with its index)."""
    return [dict(c.to_openai(), index=i) for i, c in enumerate(calls)]

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
- strict types (a wrong one is a 400, never read loosely): `stream`, `logprobs` and
  `stream_options.include_usage` are booleans, `temperature` / `top_p` finite numbers in
  range, ids non-empty strings of at most MAX_ID_CHARS; messages, content parts, tool
  calls and tools as tracerl.serve.messages checks them;
- ignored (they change nothing here): `seed` (one sampler serves every request),
  `user`, `metadata`, `store`, `parallel_tool_calls`, `service_tier` and unknown keys.

Nothing here imports torch or the web framework.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tracerl.serve.errors import APIError, bad
from tracerl.serve.messages import ToolChoice, parse_messages, parse_tool_choice, parse_tools
from tracerl.types import Message, ToolCall

__all__ = ["APIError", "ChatRequest", "Choice", "bad", "parse_request"]
MAX_STOPS = 4
MAX_ID_CHARS = 256
"""Longest episode or task id (they are kept in memory for every open episode)."""


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
    if not math.isfinite(value):
        raise bad(f"'{key}' must be a finite number, got {value}", key)
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
    if value is not None and (not isinstance(value, str) or not value
                              or len(value) > MAX_ID_CHARS):
        raise bad(f"'{key}' must be a non-empty string of at most {MAX_ID_CHARS} "
                  "characters", key)
    return value


def _flag(body: Mapping[str, Any], key: str, param: str | None = None) -> bool:
    """A boolean field: JSON true/false or absent (null). `"false"` is refused: read
    as truthy it would silently stream (issue 32)."""
    value = body.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise bad(f"'{param or key}' must be a boolean, got {value!r}", param or key)
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
    options = body.get("stream_options")
    options = {} if options is None else options
    if not isinstance(options, dict):
        raise bad("'stream_options' must be an object", "stream_options")
    metadata = body.get("metadata") or {}
    headers = {k.lower(): v for k, v in (headers or {}).items()}
    return ChatRequest(
        model=model, messages=parse_messages(body.get("messages")), tools=tools,
        tool_choice=parse_tool_choice(body.get("tool_choice"), tools),
        temperature=_number(body, "temperature", 1.0, 0.0, 2.0),
        top_p=_number(body, "top_p", 1.0, 0.0, 1.0, low_open=True),
        n=_int(body, "n", 1, max_n) or 1, max_tokens=max_tokens, stop=_stop(body.get("stop")),
        stream=_flag(body, "stream"), include_usage=_flag(options, "include_usage",
                                                        "stream_options.include_usage"),
        logprobs=_flag(body, "logprobs"),
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
    # -9999.0 stands for -inf, as OpenAI's own replies do (JSON has no infinity)
    return {"content": [{"token": t, "logprob": lp if math.isfinite(lp) else -9999.0,
                         "bytes": list(t.encode("utf-8", "replace")),
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

"""Trace any OpenAI-style client: an object with `.chat.completions.create(**kwargs)`.

The real `openai` package is not a dependency; the wrapper only reads the request
kwargs and the response (a dict, or an object with `model_dump()` as the openai SDK
returns), so it works for the official client, its async twin, and any look-alike.
Each call becomes an LLM span with the OpenInference message, tool and token fields.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace as otel

from tracerl.trace import conventions as c
from tracerl.trace.instrument import _resolve
from tracerl.trace.tracer import Tracer
from tracerl.types import ROLES, Message

SPAN_NAME = "chat.completions.create"


def _as_dict(obj: Any) -> dict[str, Any]:
    if isinstance(obj, Mapping):
        return dict(obj)
    if hasattr(obj, "model_dump"):
        return dict(obj.model_dump())
    raise TypeError(f"cannot read an OpenAI response of type {type(obj).__name__}")


def _message(data: Mapping[str, Any]) -> Message:
    role = data.get("role", "user")
    # Newer OpenAI roles ("developer") play the system role.
    fixed = dict(data, role=role if role in ROLES else "system")
    return Message.from_openai(fixed)


def request_attributes(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    messages = [_message(_as_dict(m)) for m in kwargs.get("messages", ())]
    attrs: dict[str, Any] = {
        c.SPAN_KIND: c.LLM,
        c.INPUT_VALUE: c.dumps({k: v for k, v in kwargs.items() if k != "messages"}),
        "llm.invocation_parameters": c.dumps(
            {k: v for k, v in kwargs.items() if k not in ("messages", "tools", "model")}),
    }
    if "model" in kwargs:
        attrs[c.MODEL_NAME] = str(kwargs["model"])
    attrs.update(c.message_attributes(c.INPUT_MESSAGES, messages))
    for i, tool in enumerate(kwargs.get("tools") or ()):
        attrs[f"llm.tools.{i}.tool.json_schema"] = c.dumps(tool)
    return attrs


def response_attributes(response: Any) -> dict[str, Any]:
    data = _as_dict(response)
    choices = data.get("choices") or []
    messages = [_message(_as_dict(ch.get("message") or {})) for ch in choices]
    attrs = c.message_attributes(c.OUTPUT_MESSAGES, messages)
    if messages:
        attrs[c.OUTPUT_VALUE] = messages[0].content
    usage = data.get("usage") or {}
    for key, attr in (("prompt_tokens", c.TOKENS_PROMPT),
                      ("completion_tokens", c.TOKENS_COMPLETION),
                      ("total_tokens", c.TOKENS_TOTAL)):
        if usage.get(key) is not None:
            attrs[attr] = int(usage[key])
    if data.get("model"):
        attrs[c.MODEL_NAME] = str(data["model"])
    return attrs


class _TracedCompletions:
    def __init__(self, inner: Any, tracer: Tracer | None):
        self._inner, self._tracer = inner, tracer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def create(self, **kwargs: Any) -> Any:
        if inspect.iscoroutinefunction(self._inner.create):
            return self._acreate(**kwargs)
        with _resolve(self._tracer).span(SPAN_NAME, c.LLM, request_attributes(kwargs)) as span:
            response = self._inner.create(**kwargs)
            _record(span, kwargs, response)
            return response

    async def _acreate(self, **kwargs: Any) -> Any:
        with _resolve(self._tracer).span(SPAN_NAME, c.LLM, request_attributes(kwargs)) as span:
            response = await self._inner.create(**kwargs)
            _record(span, kwargs, response)
            return response


def _record(span: otel.Span, kwargs: Mapping[str, Any], response: Any) -> None:
    if kwargs.get("stream"):  # a stream is consumed by the caller; only the request is known
        return
    span.set_attributes(response_attributes(response))


class _TracedChat:
    def __init__(self, inner: Any, tracer: Tracer | None):
        self._inner = inner
        self.completions = _TracedCompletions(inner.completions, tracer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class InstrumentedClient:
    """Delegates everything to the wrapped client; `.chat.completions.create` is traced."""

    def __init__(self, client: Any, tracer: Tracer | None = None):
        if not hasattr(getattr(getattr(client, "chat", None), "completions", None), "create"):
            raise TypeError(
                f"{type(client).__name__} has no .chat.completions.create to instrument")
        self._client = client
        self.chat = _TracedChat(client.chat, tracer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def instrument_openai(client: Any, tracer: Tracer | None = None) -> InstrumentedClient:
    """Wrap `client` so each chat completion is an LLM span (default tracer if None)."""
    return InstrumentedClient(client, tracer)

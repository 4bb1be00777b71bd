"""Instrumentation for agent code outside training: a decorator, a context manager and
a wrapper for OpenAI-style clients, all producing the same span kinds as training.

    tracer = Tracer.for_run("runs/agent")
    set_default_tracer(tracer)

    @traced(kind="TOOL")
    def search(query: str) -> str: ...

    with trace_span("answer question", kind="AGENT", input="What is 6*7?",
                    reference={"answer": "42"}) as span:
        client = instrument_openai(OpenAI(base_url=...))   # any `.chat.completions.create`
        reply = client.chat.completions.create(model="m", messages=[...])
        span.set_attribute("output.value", reply.choices[0].message.content)

Nesting follows the OTel current-span context, so a decorated tool called inside a
`trace_span` block becomes its child. Each trace (a top-level span and what nests in it)
is listed by `tracerl traces list runs/agent` and scored by `tracerl eval runs/agent
--metric ...` as a text-only trajectory: the conversation of its last LLM call.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from opentelemetry import trace as otel

from tracerl.trace import conventions as c
from tracerl.trace.tracer import Tracer

F = TypeVar("F", bound=Callable[..., Any])
_default: Tracer | None = None


def set_default_tracer(tracer: Tracer | None) -> None:
    """The tracer used by `traced`, `trace_span` and `instrument_openai` when none is given."""
    global _default
    _default = tracer


def _resolve(tracer: Tracer | None) -> Tracer:
    chosen = tracer or _default
    if chosen is None:
        raise RuntimeError("no tracer: pass tracer=... or call set_default_tracer() first")
    return chosen


@contextmanager
def trace_span(name: str, kind: str = c.CHAIN, *, input: Any = None,
               attributes: Mapping[str, Any] | None = None,
               reference: Mapping[str, Any] | None = None,
               tracer: Tracer | None = None) -> Iterator[otel.Span]:
    """A span of OpenInference `kind` around a block; `input` becomes `input.value`.

    `reference`: the fields an evaluation checks this trace against, as a task's
    (`{"answer": "42"}` for `tracerl eval RUN --metric exact_match`)."""
    attrs = dict(attributes or {})
    if input is not None:
        attrs[c.INPUT_VALUE] = input if isinstance(input, str) else c.dumps(input)
    if reference is not None:
        fields = dict(reference)
        attrs[c.RL_TASK_ANSWER] = c.dumps(fields.pop("answer", None))
        attrs[c.RL_TASK_METADATA] = c.dumps(fields)
    with _resolve(tracer).span(name, kind, attrs) as span:
        yield span


def _call_attributes(fn: Callable[..., Any], kind: str, args: tuple[Any, ...],
                     kwargs: dict[str, Any]) -> dict[str, Any]:
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
        params = {k: v for k, v in bound.arguments.items() if k not in ("self", "cls")}
    except (TypeError, ValueError):
        params = {"args": list(args), "kwargs": kwargs}
    attrs: dict[str, Any] = {c.INPUT_VALUE: c.dumps(params), c.INPUT_MIME: c.JSON_MIME}
    if kind == c.TOOL:
        attrs[c.TOOL_NAME] = fn.__name__
        attrs[c.TOOL_PARAMETERS] = c.dumps(params)
    return attrs


def _set_output(span: otel.Span, value: Any) -> None:
    span.set_attribute(c.OUTPUT_VALUE, value if isinstance(value, str) else c.dumps(value))


def traced(fn: F | None = None, *, kind: str = c.CHAIN, name: str | None = None,
           tracer: Tracer | None = None) -> Any:
    """Decorate a function (sync or async) so each call is a span of `kind`.

    Arguments become `input.value` (and `tool.name`/`tool.parameters` for TOOL), the
    return value `output.value`; an exception marks the span ERROR and propagates.
    """
    def wrap(func: F) -> F:
        span_name = name or func.__qualname__

        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                attrs = _call_attributes(func, kind, args, kwargs)
                with _resolve(tracer).span(span_name, kind, attrs) as span:
                    result = await func(*args, **kwargs)
                    _set_output(span, result)
                    return result
            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            attrs = _call_attributes(func, kind, args, kwargs)
            with _resolve(tracer).span(span_name, kind, attrs) as span:
                result = func(*args, **kwargs)
                _set_output(span, result)
                return result
        return wrapper  # type: ignore[return-value]

    return wrap(fn) if fn is not None else wrap

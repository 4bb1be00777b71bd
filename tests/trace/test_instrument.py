"""Instrumentation of agent code: decorator, context manager, OpenAI-style client."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tracerl.trace import (
    SpanRecord,
    Tracer,
    TraceStore,
    instrument_openai,
    load_trajectory,
    set_default_tracer,
    trace_span,
    traced,
)
from tracerl.util.http import OpenAIHTTPClient


@pytest.fixture
def tracer(tmp_path) -> Iterator[Tracer]:
    t = Tracer(tmp_path / "t.sqlite")
    set_default_tracer(t)
    yield t
    set_default_tracer(None)
    t.close()


def _spans(tracer: Tracer) -> dict[str, SpanRecord]:
    tracer.flush()
    with TraceStore(tracer.store_path) as store:
        return {s.name: s for s in store.all_spans()}


@traced(kind="TOOL")
def add(a: int, b: int) -> int:
    return a + b


@traced(kind="TOOL", name="divide")
def div(a: int, b: int) -> float:
    return a / b


def test_decorated_tool_records_name_parameters_and_output(tracer):
    add(2, b=3)
    a = _spans(tracer)["add"].attributes
    assert (a["openinference.span.kind"], a["tool.name"]) == ("TOOL", "add")
    assert json.loads(a["tool.parameters"]) == {"a": 2, "b": 3}
    assert a["output.value"] == "5"


def test_decorated_exception_marks_span_error_and_propagates(tracer):
    with pytest.raises(ZeroDivisionError):
        div(1, 0)
    span = _spans(tracer)["divide"]
    assert span.status_code == "ERROR"
    assert span.events[0]["name"] == "exception"


def test_spans_nest_under_context_manager(tracer):
    with trace_span("agent", kind="AGENT", input="q"):
        add(1, 1)
    spans = _spans(tracer)
    assert spans["add"].parent_id == spans["agent"].span_id
    assert spans["agent"].attributes["input.value"] == "q"


def test_async_functions_are_traced(tracer):
    @traced(kind="CHAIN")
    async def plan(goal: str) -> list[str]:
        return [goal, "done"]

    asyncio.run(plan("x"))
    assert json.loads(_spans(tracer)["test_async_functions_are_traced.<locals>.plan"]
                      .attributes["output.value"]) == ["x", "done"]


def test_unknown_kind_is_rejected(tracer):
    with pytest.raises(ValueError, match="span kind must be one of"):
        with trace_span("x", kind="BANANA"):
            pass


def test_no_tracer_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no tracer"):
        add(1, 2)


class ChatHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint answering with a tool call and usage counts."""

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        last = body["messages"][-1]["content"]
        reply = {
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": f"echo: {last}",
                "tool_calls": [{"id": "c1", "type": "function", "function": {
                    "name": "search", "arguments": json.dumps({"q": last})}}]}}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def chat_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def test_wrapped_client_call_is_an_llm_span(tracer, chat_url):
    client = instrument_openai(OpenAIHTTPClient(chat_url, api_key="k"))
    reply = client.chat.completions.create(
        model="m1", messages=[{"role": "developer", "content": "be brief"},
                              {"role": "user", "content": "hi"}])
    assert reply["choices"][0]["message"]["content"] == "echo: hi"
    a = _spans(tracer)["chat.completions.create"].attributes
    assert (a["openinference.span.kind"], a["llm.model_name"]) == ("LLM", "m1")
    assert a["llm.input_messages.1.message.content"] == "hi"
    assert a["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] == "search"
    assert (a["llm.token_count.prompt"], a["llm.token_count.total"]) == (11, 18)


def test_wrapped_client_delegates_other_attributes(tracer, chat_url):
    inner = OpenAIHTTPClient(chat_url)
    assert instrument_openai(inner).base_url == inner.base_url


def test_object_without_chat_completions_is_rejected():
    with pytest.raises(TypeError, match="no .chat.completions.create"):
        instrument_openai(object())


REPLY = "hi there"


class _Completions:
    def create(self, **kwargs):
        return {"choices": [{"message": {"role": "assistant", "content": REPLY}}]}


class _Chat:
    completions = _Completions()


class _Client:
    chat = _Chat()


def test_a_top_level_span_of_agent_code_is_listed_and_rebuilt_as_a_trajectory(tmp_path):
    """Without it `tracerl traces show RUN` found nothing and `tracerl eval RUN` scored
    0 items after a traced agent ran (issue 33)."""
    client = instrument_openai(_Client(), tracer := Tracer.for_run(tmp_path / "agent"))
    with trace_span("q", kind="AGENT", reference={"answer": "hi", "tags": "t"}, tracer=tracer):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q?"}])
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "lone"}])
    tracer.close()
    with TraceStore(tmp_path / "agent") as store:
        rows = store.trajectories(run="agent")
        assert [r.status for r in rows] == ["done", "done"]
        rebuilt = [load_trajectory(store, r.trace_id) for r in rows]
    first = next(t for t in rebuilt if t.task.answer == "hi")
    assert first.task.metadata == {"tags": "t"}
    assert [m.content for m in first.task.messages] == ["q?"]
    assert first.final_text == REPLY
    assert any(t.task.answer is None and t.task.messages[0].content == "lone" for t in rebuilt)

"""OTLP/HTTP export received by a real HTTP server on 127.0.0.1 and decoded as protobuf."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tracerl.trace import Tracer, TraceStore
from tracerl.trace.offload import OffloadedTracer
from tracerl.trace.tracer import otlp_traces_url


class Receiver(BaseHTTPRequestHandler):
    """Decodes ExportTraceServiceRequest bodies into `server.requests`."""

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append((self.path, request))  # type: ignore[attr-defined]
        payload = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _value(any_value):
    return getattr(any_value, any_value.WhichOneof("value"))


def _received_spans(server):
    spans = []
    for path, request in server.requests:
        assert path == "/v1/traces"
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                spans.extend(ss.spans)
    return {s.name: {kv.key: _value(kv.value) for kv in s.attributes} for s in spans}


def test_otlp_export_is_received_and_decoded(receiver, trajectory):
    endpoint = f"http://127.0.0.1:{receiver.server_port}"
    with Tracer(otlp_endpoint=endpoint) as tracer:
        tracer.record_trajectory(trajectory, run="otlp-run", step=2, model_name="tiny")
    spans = _received_spans(receiver)
    assert set(spans) == {"trajectory", "turn 0", "turn 1", "calculator", "lookup",
                          "correct", "format"}
    assert spans["trajectory"]["openinference.span.kind"] == "AGENT"
    assert (spans["trajectory"]["rl.run"], spans["trajectory"]["rl.step"]) == ("otlp-run", 2)
    assert spans["calculator"]["tool.name"] == "calculator"
    assert spans["turn 1"]["llm.token_count.completion"] == 2


def test_otlp_and_store_receive_the_same_spans(receiver, trajectory, tmp_path):
    endpoint = f"http://127.0.0.1:{receiver.server_port}/v1/traces"
    with Tracer(tmp_path / "t.sqlite", otlp_endpoint=endpoint) as tracer:
        tracer.record_trajectory(trajectory, run="both")
    with TraceStore(tmp_path / "t.sqlite") as store:
        assert store.count_spans() == len(_received_spans(receiver)) == 7


def test_otlp_url_gets_traces_path():
    assert otlp_traces_url("http://h:4318/") == "http://h:4318/v1/traces"


def test_non_http_endpoint_is_rejected():
    with pytest.raises(ValueError, match="otlp_endpoint must be an http"):
        Tracer(otlp_endpoint="127.0.0.1:4318")


def test_offloaded_tracer_exports_over_otlp_and_to_the_store(receiver, trajectory, tmp_path):
    endpoint = f"http://127.0.0.1:{receiver.server_port}"
    with OffloadedTracer(tmp_path / "t.sqlite", otlp_endpoint=endpoint) as tracer:
        tracer.submit(trajectory, run="child", step=3, model_name="tiny")
    spans = _received_spans(receiver)
    assert (spans["trajectory"]["rl.run"], spans["trajectory"]["rl.step"]) == ("child", 3)
    with TraceStore(tmp_path / "t.sqlite") as store:
        assert store.count_spans() == len(spans) == 7
    assert tracer.failures == 0


def test_offloaded_tracer_rejects_a_bad_endpoint_at_once(tmp_path):
    with pytest.raises(ValueError, match="otlp_endpoint must be an http"):
        OffloadedTracer(tmp_path / "t.sqlite", otlp_endpoint="127.0.0.1:4318")

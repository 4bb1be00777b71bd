"""The Tracer: one object that owns the OTel pipeline of a run.

    tracer = Tracer.for_run("runs/exp1", otlp_endpoint="http://127.0.0.1:6006")
    tracer.record_trajectory(traj, run="exp1", step=3, model_name="tiny")   # once each
    tracer.close()

It builds its own TracerProvider (never the global one, so two runs in one process
keep their spans apart) with a BatchSpanProcessor per exporter: the SQLite store and,
optionally, OTLP/HTTP to Phoenix, Jaeger or Langfuse. Recording only creates spans and
enqueues them; serialisation and I/O happen on the processors' worker threads.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry import trace as otel
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

from tracerl.trace import conventions as c
from tracerl.trace.emit import RunContext, emit_trajectory
from tracerl.trace.records import EvaluationRecord, GuardrailRecord
from tracerl.trace.sqlite_exporter import SQLiteSpanExporter
from tracerl.trace.store import STORE_FILENAME
from tracerl.types import Trajectory

log = logging.getLogger(__name__)


def otlp_traces_url(endpoint: str) -> str:
    """`http://host:4318` -> `http://host:4318/v1/traces` (a full URL is kept)."""
    if not endpoint.startswith(("http://", "https://")):
        raise ValueError(f"otlp_endpoint must be an http(s) URL, got {endpoint!r}")
    return endpoint if endpoint.rstrip("/").endswith("/v1/traces") else (
        endpoint.rstrip("/") + "/v1/traces")


class Tracer:
    """Records trajectories and instrumented agent code as OpenInference spans."""

    def __init__(
        self,
        store: str | Path | None = None,
        *,
        otlp_endpoint: str | None = None,
        otlp_headers: Mapping[str, str] | None = None,
        service_name: str = "tracerl",
        batch: bool = True,
        run: str = "agent",
    ):
        """`store`: path of the SQLite file (None: no local store). `batch=False` writes
        each span synchronously (for short scripts and tests of the exporter itself).
        `run`: the run name that instrumented agent code's traces are listed under
        (`for_run` uses the directory's name)."""
        if store is None and otlp_endpoint is None:
            raise ValueError("Tracer needs a store path, an otlp_endpoint, or both")
        self.provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        self.store_path = Path(store) if store is not None else None
        self._queue: queue.Queue[Any] | None = None
        self._worker: threading.Thread | None = None
        self.failures = 0
        """Trajectories that could not be recorded (counted and logged, never raised)."""
        self.run = run
        if self.store_path is not None:
            self._add(SQLiteSpanExporter(self.store_path), batch)
        if otlp_endpoint is not None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            otlp = OTLPSpanExporter(endpoint=otlp_traces_url(otlp_endpoint),
                                    headers=dict(otlp_headers or {}))
            self._add(otlp, batch)
        self.otel_tracer = self.provider.get_tracer("tracerl")

    @classmethod
    def for_run(cls, run_dir: str | Path, **kwargs: Any) -> Tracer:
        """A tracer writing `<run_dir>/traces.sqlite` (the run directory layout); its
        instrumented traces are listed under the directory's name as their run."""
        kwargs.setdefault("run", Path(run_dir).resolve().name)
        return cls(Path(run_dir) / STORE_FILENAME, **kwargs)

    def _add(self, exporter: SpanExporter, batch: bool) -> None:
        processor: SpanProcessor = (
            BatchSpanProcessor(exporter, max_queue_size=65536, max_export_batch_size=2048)
            if batch else SimpleSpanProcessor(exporter)
        )
        self.provider.add_span_processor(processor)

    def record_trajectory(
        self,
        traj: Trajectory,
        *,
        run: str,
        step: int = 0,
        model_name: str = "",
        guardrails: Sequence[GuardrailRecord] = (),
        evaluations: Sequence[EvaluationRecord] = (),
        explanations: Mapping[str, str] | None = None,
    ) -> str | None:
        """Emit one finished trajectory's span tree; returns its trace id.

        A failure here must not stop training: it is logged and counted in
        `self.failures`, and None is returned.
        """
        try:
            return emit_trajectory(self.otel_tracer, traj, RunContext(run, step, model_name),
                                   guardrails, evaluations, explanations)
        except Exception:  # noqa: BLE001 - contained by design, see docstring
            self.failures += 1
            log.exception("could not trace trajectory of task %r", traj.task.id)
            return None

    def submit(self, traj: Trajectory, **kwargs: Any) -> None:
        """Record a trajectory on a background thread (same arguments as record_trajectory).

        Span construction is pure Python; on a worker thread it overlaps the trainer's
        torch work (which releases the GIL) instead of adding to the step time. `flush()`
        and `close()` wait for everything submitted.
        """
        if self._queue is None:
            self._queue = queue.Queue()
            self._worker = threading.Thread(target=self._drain, name="tracerl-tracer",
                                            daemon=True)
            self._worker.start()
        self._queue.put((traj, kwargs))

    def _drain(self) -> None:
        assert self._queue is not None
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                traj, kwargs = item
                self.record_trajectory(traj, **kwargs)
            finally:
                self._queue.task_done()

    def _wait_submitted(self) -> None:
        if self._queue is not None:
            self._queue.join()

    @contextmanager
    def span(self, name: str, kind: str = c.CHAIN,
             attributes: Mapping[str, Any] | None = None) -> Iterator[otel.Span]:
        """A current span of OpenInference `kind`; children nest under it. An exception
        inside is recorded on the span (status ERROR) and re-raised. A span with no
        parent starts a trace of agent code: it carries `rl.run` (this tracer's run), so
        `tracerl traces` lists it and `tracerl eval` scores it like a trajectory."""
        if kind not in c.SPAN_KINDS:
            raise ValueError(f"span kind must be one of {c.SPAN_KINDS}, got {kind!r}")
        attrs = {c.SPAN_KIND: kind, **(attributes or {})}
        if not otel.get_current_span().get_span_context().is_valid:
            attrs.setdefault(c.RL_RUN, self.run)
        with self.otel_tracer.start_as_current_span(name, attributes=attrs) as span:
            yield span

    def flush(self, timeout_millis: int = 30000) -> bool:
        """Block until every span recorded or submitted so far has been exported."""
        self._wait_submitted()
        return self.provider.force_flush(timeout_millis)

    def close(self) -> None:
        """Flush and release the exporters (the store file stays)."""
        if self._queue is not None:
            self._queue.put(None)
            self._queue.join()
            self._queue = None
        self.provider.shutdown()

    def __enter__(self) -> Tracer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

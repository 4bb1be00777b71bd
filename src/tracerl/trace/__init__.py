"""Traces: every trajectory as OpenTelemetry spans (OpenInference conventions), an
embedded SQLite store, optional OTLP export, instrumentation and replay."""

from tracerl.trace.instrument import set_default_tracer, trace_span, traced
from tracerl.trace.offload import OffloadedTracer
from tracerl.trace.openai_wrapper import instrument_openai
from tracerl.trace.records import EvaluationRecord, GuardrailRecord
from tracerl.trace.replay import ReplayResult, load_trajectory, replay_reward, trajectory_from_spans
from tracerl.trace.store import SpanRecord, TraceStore, TrajectorySummary
from tracerl.trace.tracer import Tracer

__all__ = [
    "EvaluationRecord", "GuardrailRecord", "OffloadedTracer", "ReplayResult",
    "SpanRecord",
    "TraceStore", "Tracer", "TrajectorySummary", "instrument_openai", "load_trajectory",
    "replay_reward", "set_default_tracer", "trace_span", "traced", "trajectory_from_spans",
]

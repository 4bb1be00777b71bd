"""Tracer.submit: background recording loses nothing and close() waits for it."""

from __future__ import annotations

from tracerl.trace import Tracer, TraceStore


def test_submitted_trajectories_are_all_stored_after_close(tmp_path, build_trajectory):
    tracer = Tracer.for_run(tmp_path)
    for i in range(20):
        tracer.submit(build_trajectory(sample=i), run="bg", step=i, model_name="tiny")
    tracer.close()
    store = TraceStore(tmp_path)
    assert len(store.trajectories(run="bg")) == 20


def test_flush_waits_for_submitted_work(tmp_path, build_trajectory):
    tracer = Tracer.for_run(tmp_path)
    tracer.submit(build_trajectory(), run="f", step=0)
    tracer.flush()
    assert len(TraceStore(tmp_path).trajectories(run="f")) == 1
    tracer.close()

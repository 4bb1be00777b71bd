"""OffloadedTracer: the same spans as Tracer, built in a child process; failures contained."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time

from tracerl.trace import Tracer, TraceStore
from tracerl.trace.offload import OffloadedTracer
from tracerl.types import Task


def _shape(store: TraceStore, run: str) -> list[tuple[str, str | None, int]]:
    """(name, kind, depth) of every span of the run's first trajectory, in tree order."""
    tree = store.tree(store.trajectories(run=run)[0].trace_id)
    out = []

    def walk(node, depth):
        out.append((node.span.name, node.span.kind, depth))
        for child in node.children:
            walk(child, depth + 1)

    walk(tree, 0)
    return out


def test_offloaded_spans_match_in_process_spans(tmp_path, build_trajectory):
    with OffloadedTracer.for_run(tmp_path / "off") as off:
        for i in range(5):
            off.submit(build_trajectory(sample=i), run="r", step=i, model_name="tiny")
        assert off.flush()
        assert len(TraceStore(tmp_path / "off").trajectories(run="r")) == 5
    with Tracer.for_run(tmp_path / "in") as inline:
        inline.record_trajectory(build_trajectory(), run="r", step=0, model_name="tiny")
    offloaded, in_process = TraceStore(tmp_path / "off"), TraceStore(tmp_path / "in")
    assert _shape(offloaded, "r") == _shape(in_process, "r")
    a = offloaded.spans(offloaded.trajectories(run="r")[0].trace_id)[0].attributes
    b = in_process.spans(in_process.trajectories(run="r")[0].trace_id)[0].attributes
    assert a == b
    assert off.failures == 0
    assert off._proc.returncode == 0


def test_unpicklable_trajectory_is_counted_not_raised(tmp_path, build_trajectory):
    bad = build_trajectory()
    bad.task = Task(id="bad", messages=bad.task.messages, metadata={"f": lambda: 1})
    with OffloadedTracer.for_run(tmp_path) as tracer:
        tracer.submit(bad, run="r")
        tracer.submit(build_trajectory(sample=1), run="r")
        assert tracer.flush()
        assert tracer.failures == 1
    assert len(TraceStore(tmp_path).trajectories(run="r")) == 1


def test_dead_child_is_counted_and_tracing_falls_back_in_process(tmp_path, caplog,
                                                                  build_trajectory):
    tracer = OffloadedTracer.for_run(tmp_path)
    tracer.submit(build_trajectory(sample=0), run="before")
    assert tracer.flush()
    os.kill(tracer._proc.pid, signal.SIGKILL)
    tracer._proc.wait()
    tracer.submit(build_trajectory(sample=1), run="lost")  # sent into a dead pipe
    assert tracer.flush() is False
    assert tracer.failures == 1
    assert "tracing process failed" in caplog.text
    tracer.submit(build_trajectory(sample=2), run="after")  # now recorded in-process
    tracer.close()
    store = TraceStore(tmp_path)
    assert [len(store.trajectories(run=r)) for r in ("before", "lost", "after")] == [1, 0, 1]
    assert tracer.failures == 1


def test_child_exports_everything_when_the_parent_is_killed(tmp_path, build_trajectory):
    pickled = tmp_path / "trajectory.pickle"
    pickled.write_bytes(pickle.dumps(build_trajectory()))
    script = textwrap.dedent(f"""
        import dataclasses, os, pathlib, pickle, signal
        from tracerl.trace.offload import OffloadedTracer
        base = pickle.loads(pathlib.Path({str(pickled)!r}).read_bytes())
        tracer = OffloadedTracer.for_run({str(tmp_path / "run")!r})
        for i in range(30):
            tracer.submit(dataclasses.replace(base, sample_index=i), run="killed", step=i)
        while tracer._written < 31:  # the config frame and 30 trajectories
            pass
        print(tracer._proc.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    child = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "tracing process outlived its parent"
    assert len(TraceStore(tmp_path / "run").trajectories(run="killed")) == 30


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


class _OnlyHere:
    """Pickled by reference to a module the tracing process cannot import."""


def test_trajectory_the_child_cannot_unpickle_is_counted(tmp_path, monkeypatch,
                                                         build_trajectory):
    import types

    module = types.ModuleType("tracerl_parent_only")
    module.Thing = _OnlyHere
    _OnlyHere.__module__, _OnlyHere.__qualname__ = "tracerl_parent_only", "Thing"
    monkeypatch.setitem(sys.modules, "tracerl_parent_only", module)
    odd = build_trajectory()
    odd.task = Task(id="odd", messages=odd.task.messages, metadata={"thing": _OnlyHere()})
    with OffloadedTracer.for_run(tmp_path) as tracer:
        tracer.submit(odd, run="r")
        tracer.submit(build_trajectory(sample=1), run="r")
        assert tracer.flush()
        assert tracer.failures == 1
    assert len(TraceStore(tmp_path).trajectories(run="r")) == 1

"""Queries of the SQLite trace store, and its durability when the writer is killed."""

from __future__ import annotations

import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from tracerl.trace import Tracer, TraceStore
from tracerl.types import Status


@pytest.fixture
def store(tmp_path, build_trajectory) -> TraceStore:
    with Tracer.for_run(tmp_path) as tracer:
        tracer.record_trajectory(build_trajectory(reward=1.0, sample=0), run="a", step=0)
        tracer.record_trajectory(build_trajectory(reward=0.0, sample=1, broken_tool=False),
                                 run="a", step=1)
        tracer.record_trajectory(build_trajectory(reward=None, status=Status.ERROR, sample=2),
                                 run="b", step=0)
    return TraceStore(tmp_path)


def test_runs_summarise_each_run(store):
    runs = {r.run: r for r in store.runs()}
    assert (runs["a"].trajectories, runs["a"].steps, runs["a"].mean_reward) == (2, 2, 0.5)
    assert runs["b"].errors == 1


def test_filter_by_min_reward(store):
    assert [t.sample_index for t in store.trajectories(min_reward=0.5)] == [0]


def test_filter_by_status(store):
    assert [t.run for t in store.trajectories(status="error")] == ["b"]


def test_filter_by_tool(store):
    assert sorted(t.sample_index for t in store.trajectories(tool="lookup")) == [0, 2]


def test_filters_combine(store):
    assert store.trajectories(run="a", tool="lookup", max_reward=0.5) == []


def test_tree_of_one_trajectory(store):
    trace_id = store.trajectories(run="a", step=1)[0].trace_id
    names = [(depth, s.name) for depth, s in store.tree(trace_id).walk()]
    assert names[:3] == [(0, "trajectory"), (1, "turn 0"), (1, "calculator")]


def test_unique_prefix_resolves_trace_id(store):
    trace_id = store.trajectories(run="b")[0].trace_id
    assert store.resolve_trace_id(trace_id[:12]) == trace_id


def test_unknown_prefix_is_a_clear_error(store):
    with pytest.raises(KeyError, match="no trace with id starting 'zz'"):
        store.resolve_trace_id("zz")


def test_missing_store_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no trace store"):
        TraceStore(tmp_path / "nope.sqlite")


def test_store_readable_while_writer_is_open(tmp_path, build_trajectory):
    with Tracer(tmp_path / "t.sqlite") as tracer:
        tracer.record_trajectory(build_trajectory(), run="live")
        tracer.flush()
        with TraceStore(tmp_path / "t.sqlite") as reader:
            assert len(reader.trajectories(run="live")) == 1


WRITER = textwrap.dedent("""
    import dataclasses, pathlib, pickle
    from tracerl.trace import Tracer
    base = pickle.loads(pathlib.Path({pickled!r}).read_bytes())
    tracer = Tracer({path!r})
    n = 0
    while True:
        for i in range(20):
            tracer.record_trajectory(dataclasses.replace(base, sample_index=n), run="crash",
                                     step=n)
            n += 1
        tracer.flush()
        print(n, flush=True)
""")


def test_store_survives_sigkill_mid_write(tmp_path, build_trajectory):
    path, pickled = tmp_path / "t.sqlite", tmp_path / "trajectory.pickle"
    pickled.write_bytes(pickle.dumps(build_trajectory()))
    code = WRITER.format(pickled=str(pickled), path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    committed = 0
    try:
        for _ in range(6):  # let several batches commit, then kill during the next ones
            committed = int(proc.stdout.readline())
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert committed >= 120
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with TraceStore(path) as store:
        assert len(store.trajectories(run="crash")) >= committed

"""SandboxPool mechanics: concurrency, worker replacement, isolation modes, sessions."""

from __future__ import annotations

import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tracerl.sandbox import Limits, SandboxPool, SandboxUnavailable, Session, isolation


def test_concurrent_runs_from_threads_all_complete(pool: SandboxPool) -> None:
    with ThreadPoolExecutor(4) as ex:
        outs = list(ex.map(lambda i: pool.run_python(f"print({i} * 2)").stdout, range(12)))
    assert outs == [f"{i * 2}\n" for i in range(12)]


def test_dead_worker_is_replaced_and_reports_infra_error() -> None:
    with SandboxPool(workers=1) as p:
        worker = p._idle.queue[0]
        assert worker is not None
        worker.proc.kill()
        worker.proc.wait()
        res = p.run_python("print('next')")
        assert res.stdout == "next\n" and p.replaced == 1


def test_worker_killed_mid_run_gives_infra_error_not_a_verdict() -> None:
    with SandboxPool(workers=1) as p:
        worker = p._idle.queue[0]
        assert worker is not None
        threading.Timer(0.5, worker.proc.kill).start()
        res = p.run_python("import time; time.sleep(5)", timeout_s=10)
        assert res.status == "infra_error" and res.error


@pytest.fixture
def no_unshare(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulate a host without util-linux unshare (the real binary exists here)."""
    real_which = shutil.which
    monkeypatch.setattr(isolation.shutil, "which",
                        lambda name: None if name == "unshare" else real_which(name))
    isolation.namespace_support.cache_clear()
    yield
    isolation.namespace_support.cache_clear()


@pytest.mark.usefixtures("no_unshare")
def test_strict_refuses_to_run_without_namespaces() -> None:
    with pytest.raises(SandboxUnavailable, match="user_ns"):
        SandboxPool(workers=1, isolation="strict")


@pytest.mark.usefixtures("no_unshare")
def test_best_effort_warns_and_records_what_is_missing() -> None:
    with pytest.warns(RuntimeWarning, match="WITHOUT"), SandboxPool(workers=1) as p:
        res = p.run_python("print('still runs')")
    assert res.stdout == "still runs\n" and "net_ns" in res.missing_isolation


def test_invalid_limits_are_rejected_with_the_field_name() -> None:
    with pytest.raises(ValueError, match="Limits.memory_mb"):
        Limits(memory_mb=0)


def test_session_answers_calls_after_loading(pool: SandboxPool) -> None:
    with Session(pool, "def f(x):\n    return x + 1\n", Limits(timeout_s=5)) as s:
        reply = s.request({"op": "call", "target": {"global": "f"},
                           "args": {"t": [41]}, "kwargs": {"d": []}}, 2)
    assert s.loaded and reply == {"ok": True, "value": 42}


def test_session_call_that_hangs_is_killed_at_its_deadline(pool: SandboxPool) -> None:
    s = Session(pool, "def f():\n    while True: pass\n", Limits(timeout_s=30))
    reply = s.request({"op": "call", "target": {"global": "f"}}, 0.5)
    res = s.close()
    assert reply is None and not s.alive and res.status == "timeout" and res.wall_s < 10


def test_session_map_answers_each_call_in_order_in_one_request(pool: SandboxPool) -> None:
    code = "def f(x):\n    if x == 2:\n        raise KeyError(x)\n    return x * 10\n"
    calls = [{"args": {"t": [x]}} for x in (1, 2, 3)]
    with Session(pool, code, Limits(timeout_s=5)) as s:
        replies = list(s.stream({"op": "map", "target": {"global": "f"}, "calls": calls}, 3, 2))
    assert [r["ok"] for r in replies] == [True, False, True]
    assert (replies[0]["value"], replies[1]["exc"], replies[2]["value"]) == (10, "KeyError", 30)


def test_session_map_stops_at_the_call_that_hangs(pool: SandboxPool) -> None:
    code = "def f(x):\n    while x == 2:\n        pass\n    return x\n"
    calls = [{"args": {"t": [x]}} for x in (1, 2, 3)]
    s = Session(pool, code, Limits(timeout_s=30))
    replies = list(s.stream({"op": "map", "target": {"global": "f"}, "calls": calls}, 3, 0.5))
    res = s.close()
    assert replies == [{"ok": True, "value": 1}, None]
    assert not s.alive and res.status == "timeout"


def test_a_settling_session_reads_a_first_request_that_ends_it_in_one_go(
        pool: SandboxPool) -> None:
    calls = [{"args": {"t": [x]}} for x in (1, 2, 3)]
    ahead = {"op": "map", "target": {"global": "f"}, "calls": calls, "last": True}
    s = Session(pool, "def f(x):\n    return x * 10\n", Limits(timeout_s=30), 5, ahead,
                settle=4)
    # it slept until the child had answered: the replies are buffered, or the run is over
    assert s._reader.buffered() == 3 or s._run.wait_ended(0)
    replies = list(s.stream(None, 3, 5))
    res = s.close()
    assert [r["value"] for r in replies] == [10, 20, 30] and res.status == "ok"


def test_a_settling_session_still_catches_a_hang_at_the_call_deadline(
        pool: SandboxPool) -> None:
    calls = [{"args": {"t": [x]}} for x in (1, 2, 3)]
    ahead = {"op": "map", "target": {"global": "f"}, "calls": calls, "last": True}
    code = "def f(x):\n    while x == 2:\n        pass\n    return x\n"
    start = time.monotonic()
    s = Session(pool, code, Limits(timeout_s=30), 0.5, ahead, settle=4)
    replies = list(s.stream(None, 3, 0.5))
    res = s.close()
    assert replies == [{"ok": True, "value": 1}, None] and res.status == "timeout"
    assert time.monotonic() - start < 5  # the call's 0.5 s (and settling), not the 30 s


def test_wait_ended_is_true_once_the_run_has_ended(pool: SandboxPool) -> None:
    slow = pool.begin(pool.job("import time\ntime.sleep(0.5)\n", pool.limits_for(5, None)))
    assert not slow.wait_ended(0.05)
    assert slow.wait_ended(5) and pool.finish(slow).status == "ok"

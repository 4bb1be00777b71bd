"""Pipelined candidate calls: which asserts qualify, and that verdicts do not change."""

from __future__ import annotations

import socket
import threading

import pytest

from tracerl.rewards import code_tests, parse_tests
from tracerl.rewards.pipeline import pipelined_call
from tracerl.rewards.remote import CandidateRPC
from tracerl.sandbox import SandboxPool, _serve, _wire


def _call(line: str, names: frozenset[str] = frozenset({"f", "g"})):
    case = parse_tests(line).source[0]
    return pipelined_call(case, names)


@pytest.mark.parametrize("line", [
    "assert f(1, 2) == 3",
    "assert f([1, 2], k=3) == [1]",
    "assert abs(f(2.0) - 1.4) < 1e-6",
    "assert sorted(f('ab')) == ['a', 'b'], 'message'",
    "assert f(-1) is None",
    "assert not f(x[0])",
])
def test_independent_asserts_qualify(line: str) -> None:
    call = _call(line)
    assert call is not None and call.func == "f"


@pytest.mark.parametrize("line", [
    "assert f(1) == f(2)",           # two calls
    "assert f(1) == g",              # another candidate name
    "assert f(g(1)) == 2",           # a candidate call inside the arguments
    "assert f(*args) == 2",          # unpacking
    "assert f(lst.pop()) == 2",      # a side effect in the arguments
    "assert f(1) == lst.pop()",      # a side effect beside the call
    "assert (y := f(1)) == 1",       # binds a name
    "assert f(1).real == 1",         # attribute of the returned value
    "assert f(lambda: 1) == 1",
    "assert helper(f(1))",           # a test helper could do anything
])
def test_asserts_that_could_interact_do_not(line: str) -> None:
    assert _call(line) is None


def test_setup_statements_never_qualify() -> None:
    plan = parse_tests("x = [1]\nassert f(x) == 1\n")
    assert pipelined_call(plan.source[0], frozenset({"f"})) is None


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    counts = {"request": 0, "map": 0, "ahead": 0}
    request, map_, ahead = CandidateRPC.request, CandidateRPC.map, CandidateRPC.take_ahead

    def counted_request(self, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        counts["request"] += 1
        return request(self, *a, **k)

    def counted_map(self, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
        counts["map"] += 1
        return map_(self, *a, **k)

    def counted_ahead(self):  # noqa: ANN001, ANN202
        got = ahead(self)
        counts["ahead"] += len(got)
        return got

    monkeypatch.setattr(CandidateRPC, "request", counted_request)
    monkeypatch.setattr(CandidateRPC, "map", counted_map)
    monkeypatch.setattr(CandidateRPC, "take_ahead", counted_ahead)
    return counts


def test_a_leading_run_of_asserts_goes_out_with_the_job(pool: SandboxPool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _counting(monkeypatch)
    tests = "\n".join(f"assert add({i}, 1) == {i + 1}" for i in range(6))
    r = code_tests("def add(a, b):\n    return a + b\n", tests, pool=pool)
    assert (r.score, r.passed) == (1.0, 6)
    assert counts == {"request": 0, "map": 0, "ahead": 6}  # no round trip of their own


def test_a_later_run_of_asserts_costs_one_round_trip(pool: SandboxPool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _counting(monkeypatch)
    tests = "x = 1\n" + "\n".join(f"assert add({i}, x) == {i + 1}" for i in range(6))
    r = code_tests("def add(a, b):\n    return a + b\n", tests, pool=pool)
    assert (r.score, r.passed) == (1.0, 6)
    assert counts == {"request": 0, "map": 1, "ahead": 0}


def test_large_arguments_stay_out_of_the_early_request(pool: SandboxPool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    counts = _counting(monkeypatch)
    tests = "assert total([1, 2]) == 3\nassert total([]) == 0\n" \
            "assert total(list(range(50000))) == 1249975000\nassert total([5] * 9000) == 45000\n"
    r = code_tests("def total(xs):\n    return sum(xs)\n", tests, pool=pool)
    assert (r.score, r.passed) == (1.0, 4)
    assert counts == {"request": 0, "map": 1, "ahead": 2}


def test_early_replies_for_a_name_that_is_not_a_function_are_dropped(
        pool: SandboxPool) -> None:
    tests = "assert f(1) == 1\nassert f(2) == 2\n"
    r = code_tests("f = 1\n", tests, pool=pool)
    assert r.passed == 0 and r.status == "wrong"
    assert all("TypeError" in c["why"] for c in r.details["cases"])  # int is not callable
    r = code_tests("g = 1\n", tests, pool=pool)
    assert r.passed == 0 and all("NameError" in c["why"] for c in r.details["cases"])


def test_calls_reach_a_stateful_candidate_in_assert_order(pool: SandboxPool) -> None:
    cand = "n = 0\ndef tick():\n    global n\n    n += 1\n    return n\n"
    tests = "assert tick() == 1\nassert tick() == 2\nx = 5\nassert tick() == 3\n" \
            "assert tick() == 4\n"
    assert code_tests(cand, tests, pool=pool).score == 1.0


def test_a_crash_inside_a_run_fails_that_case_and_the_rest_run_in_a_fresh_process(
        pool: SandboxPool) -> None:
    cand = "import os\ndef f(x):\n    if x == 2:\n        os._exit(0)\n    return x\n"
    tests = "\n".join(f"assert f({i}) == {i}" for i in range(1, 5))
    r = code_tests(cand, tests, pool=pool)
    assert r.passed == 3 and r.details["restarts"] == 1
    assert [c["passed"] for c in r.details["cases"]] == [True, False, True, True]
    assert "crashed" in r.details["cases"][1]["why"]


def test_exceptions_and_wrong_values_are_judged_per_case(pool: SandboxPool) -> None:
    cand = "def f(x):\n    if x < 0:\n        raise ValueError('neg')\n    return x * 2\n"
    tests = ["assert f(1) == 2", "assert f(-1) == 0", "assert f(2) == 5", "assert f(3) == 6"]
    r = code_tests(cand, tests, pool=pool)
    assert [c["passed"] for c in r.details["cases"]] == [True, False, False, True]
    assert "ValueError" in r.details["cases"][1]["why"]


def _serve_then_set(sock: socket.socket, glb: dict, done: threading.Event) -> None:
    _serve.serve(sock, glb, load_error=0)
    done.set()


def test_a_last_request_ends_the_child_unless_it_handed_out_a_reference() -> None:
    def f(x):  # noqa: ANN001, ANN202
        return x if x else object()

    for args, ends in (([1, 2], True), ([1, 0], False)):
        parent, child = socket.socketpair()
        done = threading.Event()
        t = threading.Thread(target=_serve_then_set, args=(child, {"f": f}, done), daemon=True)
        t.start()
        _wire.recv_msg(parent)  # the hello
        calls = [{"args": _wire.encode((a,)), "kwargs": _wire.encode({})} for a in args]
        _wire.send_msg(parent, {"op": "map", "target": {"global": "f"}, "calls": calls,
                                "last": True})
        replies = [_wire.recv_msg(parent)[0] for _ in args]
        assert all(r["ok"] for r in replies)
        assert done.wait(2.0 if ends else 0.3) is ends  # no EOF was sent
        parent.close()
        t.join(2.0)
        child.close()


def test_references_returned_by_a_last_request_stay_usable(pool: SandboxPool) -> None:
    cand = "class L:\n    def __len__(self):\n        return 2\ndef f(x):\n    return L()\n"
    r = code_tests(cand, "assert len(f(1)) == 2\nassert len(f(2)) == 2\n", pool=pool)
    assert (r.score, r.passed) == (1.0, 2)

"""The per-plan half of code_tests: constant arguments encoded once, verdicts unchanged."""

from __future__ import annotations

import json

import pytest

from tracerl.rewards import code_tests, parse_tests
from tracerl.rewards.prepared import AHEAD_MAX_BYTES, PreparedPlan, prepare
from tracerl.sandbox import SandboxPool


def _constant(tests: str) -> list[bool]:
    return [text is not None for text in prepare(parse_tests(tests)).encoded]


def test_only_arguments_the_tests_fix_are_encoded_ahead() -> None:
    tests = ("assert f(1, [2, 3], k='x') == 1\n"
             "assert f(sorted({3, 1})) == 2\n"
             "x = [1]\n"
             "assert f(x) == 3\n"          # a setup variable: evaluated per run
             "assert f(len(x)) == 4\n"
             "assert f(1 / 0) == 5\n")      # raises: left to the run, which reports it
    assert _constant(tests) == [True, True, False, False, False, False]
    call = json.loads(prepare(parse_tests(tests)).encoded[0])
    assert call["args"] == {"t": [1, {"l": [2, 3]}]} and call["kwargs"] == {"d": [["k", "x"]]}


def test_a_builtin_the_tests_rebind_is_not_constant() -> None:
    tests = "assert f(sorted([2, 1])) == [0]\ndef sorted(xs):\n    return [0]\n"
    assert _constant(tests)[0] is False


def test_the_leading_run_goes_with_the_job_up_to_its_size_limit() -> None:
    big = AHEAD_MAX_BYTES // 4
    tests = f"assert f(1) == 1\nassert f(2) == 2\nassert f([0] * {big}) == 0\nassert g(1) == 1\n"
    prep = prepare(parse_tests(tests))
    assert prep.head == 2 and prep.ahead is not None
    sent = json.loads(prep.ahead)
    assert sent["target"] == {"global": "f"} and len(sent["calls"]) == 2 and not sent["last"]
    assert prepare(parse_tests("x = 1\nassert f(1) == 1\n")).ahead is None


def test_a_big_constant_with_a_short_source_travels_as_that_source() -> None:
    tests = "assert f(list(range(10**5))) == 0\nassert f([1] * 3) == 1\n"
    prep = prepare(parse_tests(tests))
    assert json.loads(prep.encoded[0]) == {"expr": "((list(range(10 ** 5)),), {})"}
    assert "args" in json.loads(prep.encoded[1])
    # Weighed by its value: it does not go with the job (a grader stopping at a first
    # failure might never build it), and neither does what follows it.
    assert prep.head == 0 and prep.ahead is None


def test_a_candidate_patching_builtins_changes_only_what_it_receives(pool: SandboxPool) -> None:
    tests = "assert f(list(range(5000))) == [5000, 4999]\n"
    honest = "def f(xs):\n    return [len(xs), xs[-1]]\n"
    patched = "import builtins\nbuiltins.list = lambda *a: [0]\n" + honest
    assert [code_tests(c, tests, pool=pool).score for c in (honest, patched)] == [1.0, 0.0]


def test_verdicts_match_one_call_a_trip_for_candidates_sharing_a_plan(
        pool: SandboxPool, monkeypatch: pytest.MonkeyPatch) -> None:
    tests = ("assert f(list(range(3000))) == 2999\n"
             "assert f([4, 1]) == 4\n"
             "def sorted(xs):\n    return [7]\n"
             "assert f(sorted([1, 2])) == 7\n"   # the tests' own sorted, bound by now
             "assert f([]) is None\n")
    cands = ["def f(xs):\n    return max(xs) if xs else None\n",
             "def f(xs):\n    return xs[-1] if xs else None\n",
             "def f(xs):\n    return None\n"]
    cached = [code_tests(c, tests, pool=pool) for c in cands]
    assert [r.passed for r in cached] == [4, 3, 1]
    monkeypatch.setattr("tracerl.rewards.code.prepare", PreparedPlan.one_call_a_trip)
    plain = [code_tests(c, tests, pool=pool) for c in cands]
    assert [r.details["cases"] for r in plain] == [r.details["cases"] for r in cached]

"""code_tests: test shapes, scoring, and infrastructure failures."""

from __future__ import annotations

import threading

import pytest

from tracerl.rewards import IOCase, code_tests
from tracerl.sandbox import SandboxPool

ADD = "def add(a, b):\n    return a + b\n"


def test_list_of_asserts_all_pass(pool: SandboxPool) -> None:
    r = code_tests(ADD, ["assert add(1, 2) == 3", "assert add('a', 'b') == 'ab'"], pool=pool)
    assert (r.score, r.status, r.passed, r.total) == (1.0, "ok", 2, 2)


def test_partial_credit_is_passed_over_total(pool: SandboxPool) -> None:
    r = code_tests(ADD, ["assert add(1, 2) == 3", "assert add(1, 2) == 4"], pool=pool)
    assert (r.score, r.passed, r.total) == (0.5, 1, 2)


def test_all_or_nothing_without_partial(pool: SandboxPool) -> None:
    r = code_tests(ADD, ["assert add(1, 2) == 3", "assert add(1, 2) == 4"], pool=pool,
                   partial=False)
    assert r.score == 0.0


def test_code_block_with_setup_and_test_functions(pool: SandboxPool) -> None:
    tests = "import math\nxs = [1, 2]\nassert add(*xs) == 3\n\ndef test_float():\n" \
            "    assert math.isclose(add(0.1, 0.2), 0.3)\n"
    r = code_tests(ADD, tests, pool=pool)
    assert (r.score, r.total) == (1.0, 2)


def test_humaneval_check_with_entry_point(pool: SandboxPool) -> None:
    tests = ("def check(candidate):\n    assert candidate(2, 3) == 5\n"
             "    assert candidate(0, 0) == 0\n")
    assert code_tests(ADD, tests, entry_point="add", pool=pool).score == 1.0


def test_io_cases_compare_stdout(pool: SandboxPool) -> None:
    prog = "a, b = map(int, input().split())\nprint(a + b)\n"
    cases = [IOCase("1 2\n", "3\n"), {"input": "5 5", "output": "10"}]
    assert code_tests(prog, cases, pool=pool).score == 1.0


def test_io_wrong_output_fails(pool: SandboxPool) -> None:
    assert code_tests("print('3')", [IOCase("1 1\n", "2\n")], pool=pool).score == 0.0


def test_classes_are_driven_through_remote_references(pool: SandboxPool) -> None:
    cls = "class Counter:\n    def __init__(self):\n        self.n = 0\n" \
          "    def bump(self):\n        self.n += 1\n        return self.n\n"
    tests = "c = Counter()\nc.bump()\nassert c.bump() == 2\nassert c.n == 2\n"
    assert code_tests(cls, tests, pool=pool).score == 1.0


def test_expected_exceptions_are_raised_as_builtin_types(pool: SandboxPool) -> None:
    code = "def f(x):\n    raise ValueError('bad')\n"
    tests = "try:\n    f(1)\n    ok = False\nexcept ValueError:\n    ok = True\nassert ok\n"
    assert code_tests(code, tests, pool=pool).score == 1.0


def test_syntax_error_in_candidate_scores_zero(pool: SandboxPool) -> None:
    r = code_tests("def add(a, b) return", ["assert add(1, 2) == 3"], pool=pool)
    assert (r.score, r.status) == (0.0, "error")


def test_candidate_cannot_shadow_builtins_the_tests_use(pool: SandboxPool) -> None:
    code = "def abs(x):\n    return 0\ndef f(x):\n    return 10\n"
    assert code_tests(code, ["assert abs(f(1) - 3) < 1"], pool=pool).score == 0.0


def test_bad_tests_shape_is_a_clear_error(pool: SandboxPool) -> None:
    with pytest.raises(ValueError, match="tests must be"):
        code_tests(ADD, {"not": "tests"}, pool=pool)


def test_sandbox_failure_scores_none_not_zero() -> None:
    with SandboxPool(workers=1) as p:
        worker = p._idle.queue[0]
        assert worker is not None
        threading.Timer(0.5, worker.proc.kill).start()
        r = code_tests("import time\ntime.sleep(5)\ndef add(a, b): return a + b",
                       ["assert add(1, 2) == 3"], pool=p, timeout_s=8)
    assert r.score is None and r.status == "infra_error"


def test_all_or_nothing_stops_at_the_first_failure_and_says_so(pool: SandboxPool) -> None:
    tests = ["assert add(1, 2) == 3", "assert add(1, 2) == 4", "assert add(2, 2) == 4"]
    r = code_tests(ADD, tests, pool=pool, partial=False)
    assert (r.score, r.passed, r.total, r.details["ran"]) == (0.0, 1, 3, 2)
    r = code_tests(ADD, tests, pool=pool)
    assert (r.passed, r.total, r.details["ran"]) == (2, 3, 3)
    io = [{"input": "1\n", "output": "2\n"}, {"input": "2\n", "output": "9\n"},
          {"input": "3\n", "output": "4\n"}]
    r = code_tests("print(int(input()) + 1)\n", io, pool=pool, partial=False)
    assert (r.score, r.passed, r.details["ran"]) == (0.0, 1, 2)

"""Every known trick against a code grader scores 0 under code_tests."""

from __future__ import annotations

import pytest

from tracerl.rewards import code_tests
from tracerl.rewards.extract import extract_code
from tracerl.rewards.hacks import CODE_HACKS, CODE_TESTS, Hack
from tracerl.sandbox import SandboxPool

SOLUTION = ("def second_largest(xs):\n    v = sorted(set(xs))\n"
            "    return v[-2] if len(v) > 1 else None\n")


def test_the_honest_solution_scores_one(pool: SandboxPool) -> None:
    assert code_tests(SOLUTION, CODE_TESTS, pool=pool, timeout_s=2).score == 1.0


# These wait out the 1 s timeout or a memory or process limit.
WAITS_FOR_A_LIMIT = {"infinite_loop", "memory_bomb", "fork_bomb"}


@pytest.mark.parametrize("hack", [
    pytest.param(h, id=h.name, marks=[pytest.mark.slow] if h.name in WAITS_FOR_A_LIMIT else [])
    for h in CODE_HACKS])
def test_trick_scores_zero(hack: Hack, pool: SandboxPool) -> None:
    r = code_tests(extract_code(hack.completion), CODE_TESTS, pool=pool, timeout_s=1)
    assert r.score == 0.0, (hack.name, r)


@pytest.mark.parametrize("prefix", ["import os\nos._exit(0)\n", "raise SystemExit(0)\n"])
def test_exit_after_a_correct_definition_still_fails_nothing_is_trusted(
    prefix: str, pool: SandboxPool
) -> None:
    """Exiting 0 at import is not a pass, even when the code would be right."""
    r = code_tests(prefix + SOLUTION, CODE_TESTS, pool=pool, timeout_s=1)
    assert r.score == 0.0


def test_trick_inside_the_function_fails_only_that_call(pool: SandboxPool) -> None:
    exit_on_one_input = "    if xs == [4, 4]:\n        import os; os._exit(0)\n    v = "
    code = SOLUTION.replace("    v = ", exit_on_one_input)
    r = code_tests(code, CODE_TESTS, pool=pool, timeout_s=1)
    assert (r.passed, r.total) == (3, 4)


def test_exception_swallowing_test_cannot_count_a_crash_as_the_expected_error(
    pool: SandboxPool,
) -> None:
    tests = ("try:\n    f(-1)\n    raised = False\nexcept Exception:\n    raised = True\n"
             "assert raised\n")
    r = code_tests("def f(x):\n    import os\n    os._exit(1)\n", tests, pool=pool, timeout_s=1)
    assert r.score == 0.0

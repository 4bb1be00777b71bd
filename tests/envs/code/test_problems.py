"""The built-in code problems: enough of them, and each one's tests are sound."""

from __future__ import annotations

import pytest

from tracerl.envs.code import CodeProblem, load_problems
from tracerl.rewards import code_tests
from tracerl.sandbox import SandboxPool

PROBLEMS = load_problems()


def wrong_solution(p: CodeProblem) -> str:
    if p.entry_point is None:
        return "print()\n"
    return f"def {p.entry_point}(*args, **kwargs):\n    return None\n"


def test_at_least_60_problems_with_unique_ids_and_mixed_difficulty() -> None:
    ids = [p.id for p in PROBLEMS]
    assert len(ids) >= 60 and len(set(ids)) == len(ids)
    assert {"easy", "medium", "hard"} <= {p.difficulty for p in PROBLEMS}


def test_all_three_test_shapes_are_represented() -> None:
    assert any(p.io for p in PROBLEMS)
    assert any(isinstance(p.tests, str) and "def test_" in p.tests for p in PROBLEMS)
    assert any(isinstance(p.tests, str) and "\nassert " in p.tests for p in PROBLEMS)


@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.id)
def test_reference_passes_and_trivially_wrong_fails(problem: CodeProblem,
                                                    pool: SandboxPool) -> None:
    good = code_tests(problem.solution, problem.hidden_tests, entry_point=problem.entry_point,
                      pool=pool, timeout_s=3)
    bad = code_tests(wrong_solution(problem), problem.hidden_tests,
                     entry_point=problem.entry_point, pool=pool, timeout_s=3, partial=False)
    assert (good.score, bad.score) == (1.0, 0.0), good.details

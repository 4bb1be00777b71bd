"""CodeTaskSet splits and Tasks, and the code tools."""

from __future__ import annotations

from tracerl.envs.code import CodeTaskSet, CodeTools, load_problems, problem_task
from tracerl.sandbox import SandboxPool


def test_train_and_held_out_are_disjoint_and_cover_everything() -> None:
    ts = CodeTaskSet(seed=3)
    train = {t.id for t in ts.tasks("train")}
    held = {t.id for t in ts.tasks("held_out")}
    assert not train & held and len(train | held) == len(ts) and held


def test_split_is_reproducible_for_a_seed_and_changes_with_it() -> None:
    a, b, c = CodeTaskSet(seed=1), CodeTaskSet(seed=1), CodeTaskSet(seed=2)
    ids = [t.id for t in a.tasks("held_out")]
    assert ids == [t.id for t in b.tasks("held_out")] != [t.id for t in c.tasks("held_out")]


def test_hidden_tests_stay_out_of_the_prompt() -> None:
    task = CodeTaskSet().tasks("train")[0]
    tests = task.metadata["tests"]
    snippet = tests if isinstance(tests, str) else str(tests[0])
    assert snippet.strip()[:30] not in task.messages[0].content


def test_sample_is_seeded() -> None:
    ts = CodeTaskSet(seed=0)
    assert [t.id for t in ts.sample(5, seed=9)] == [t.id for t in ts.sample(5, seed=9)]


def test_tools_run_code_and_score_the_submission(pool: SandboxPool) -> None:
    problem = next(p for p in load_problems() if p.id == "gcd")
    tools = CodeTools(problem_task(problem), pool=pool, timeout_s=2)
    assert "stdout:\n4" in tools.run_python("print(2 + 2)")
    assert tools.submit(problem.solution) == "submitted"
    assert tools.reward().score == 1.0


def test_no_submission_scores_zero(pool: SandboxPool) -> None:
    tools = CodeTools(problem_task(load_problems()[0]), pool=pool)
    assert tools.reward().status == "no_submission"

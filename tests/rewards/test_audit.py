"""The reward audit: weak rewards are caught, strong ones pass clean."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from tracerl.cli.audit import add_arguments, run
from tracerl.rewards import (
    CodeTestsReward,
    FormatReward,
    Gate,
    MathAnswerReward,
    audit,
)
from tracerl.rewards.hacks import ALL_HACKS, CATEGORIES
from tracerl.sandbox import SandboxPool, default_pool
from tracerl.types import Trajectory


def exit_code_grader(trajectory: Trajectory) -> float:
    """The common broken grader: append the tests, run, 1.0 if the exit code is 0."""
    from tracerl.rewards.extract import extract_code

    tests = trajectory.task.metadata["tests"]
    res = default_pool().run_python(extract_code(trajectory.final_text) + "\n" + tests,
                                    timeout_s=1)
    return 1.0 if res.returncode == 0 else 0.0


exit_code_grader.name = "exit_code_grader"  # type: ignore[attr-defined]


def test_library_has_at_least_25_hacks_in_every_category() -> None:
    assert len(ALL_HACKS) >= 25 and {h.category for h in ALL_HACKS} == set(CATEGORIES)


@pytest.mark.slow  # runs every code hack in a subprocess
def test_weak_code_grader_is_exploited_by_exit_tricks() -> None:
    report = audit(exit_code_grader, categories=["code"])
    hacked = {r.hack for r in report.exploited}
    expected = {"os_exit_zero", "sys_exit_zero", "atexit_exit_zero", "excepthook_exit_zero"}
    assert not report.ok and expected <= hacked


@pytest.mark.slow  # runs every code and judge hack in the sandbox
def test_code_tests_passes_the_audit_clean(pool: SandboxPool) -> None:
    report = audit(CodeTestsReward(timeout_s=1, pool=pool), categories=["code", "judge"])
    assert report.ok, [r.hack for r in report.exploited]


def test_format_only_reward_is_exploited_and_gated_math_is_clean() -> None:
    weak = audit(FormatReward(), categories=["format"])
    strong = audit(Gate(FormatReward(), MathAnswerReward(timeout_s=2)), categories=["format"])
    assert {r.hack for r in weak.exploited} == {"format_only"} and strong.ok


@pytest.mark.slow  # verifies every math and judge hack
def test_math_answer_passes_math_and_judge_hacks() -> None:
    report = audit(MathAnswerReward(timeout_s=2), categories=["math", "judge"])
    assert report.ok, [(r.hack, r.score) for r in report.exploited]


def test_reward_that_raises_is_not_applicable_not_exploited() -> None:
    report = audit(MathAnswerReward(), categories=["code"])
    assert report.ok and {r.verdict for r in report.results} == {"not_applicable"}


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return run(parser.parse_args(argv))


@pytest.mark.slow  # runs every code hack in a subprocess
def test_cli_exits_nonzero_when_a_hack_scores(capsys: pytest.CaptureFixture[str]) -> None:
    code = _cli([f"{__name__}:exit_code_grader", "--category", "code"])
    assert code == 1 and "EXPLOITED" in capsys.readouterr().out


@pytest.mark.slow  # verifies every math hack
def test_cli_exits_zero_for_a_clean_reward(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["math_answer", "--category", "math"]) == 0


def test_cli_rejects_an_unknown_reward(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["no_such_reward"]) == 2 and "module:attr" in capsys.readouterr().out


@pytest.mark.slow  # a fresh interpreter that imports the reward stack
def test_module_entry_point_runs() -> None:
    proc = subprocess.run([sys.executable, "-m", "tracerl.cli.audit", "math_answer",
                           "--category", "judge"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "math_answer" in proc.stdout

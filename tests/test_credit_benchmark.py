"""benchmarks/credit.py's pieces: its figures on hand-made trajectories, and one short
run of its RL loop, report and plot (a plumbing check; the figures are the benchmark's)."""

import argparse
import importlib.util
import sys
from pathlib import Path

import pytest

from tracerl.envs.doors import DoorsFamily
from tracerl.types import Trajectory, Turn

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "credit.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("credit_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def _play(signs: str, actions: str, reward: float) -> Trajectory:
    task = DoorsFamily().tasks("train", 1, seed=0)[0]
    task = type(task)(task.id, task.messages, metadata={"signs": signs})
    return Trajectory(task, [0], turns=[Turn([1], [0.0], a) for a in actions],
                      outcome_reward=reward)


def test_step_figures_count_filler_and_mistakes_by_door_kind(bench):
    # doors a, A(b): "a" opens, "." waits, "a" wrong at A, "b" opens A
    done = _play("aA", "a.ab", 1.0)
    # door B(c): "c" opens it at once
    quick = _play("B", "c", 0.0)
    figures = bench.step_figures([done, quick])
    assert figures.success == 0.5
    assert figures.filler == 1 / 5
    assert figures.easy_mistakes == 0.0
    assert figures.hard_mistakes == 1 / 3  # three tries at hard doors, one wrong


def test_steps_to_threshold_uses_the_trailing_mean(bench):
    assert bench.steps_to_threshold([0.2, 0.9, 0.9, 0.5, 0.9], 0.75, 2) == 3
    assert bench.steps_to_threshold([0.2, 0.9, 0.5], 0.75, 2) is None
    mean, lo, hi = bench.mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0 and hi - mean == pytest.approx(4.30 / 3 ** 0.5)


@pytest.mark.slow
def test_a_short_sweep_writes_its_rows_report_and_plot(bench, tmp_path, capsys):
    base = bench.build_base(tmp_path / "base", 0)
    args = argparse.Namespace(max_steps=2, tasks=1, group=2, lr=1e-3, eval_tasks=2,
                              threshold=0.5, window=1, plot=str(tmp_path / "p.png"))
    runs = [bench.run_method(base, m, 0, args, tmp_path) for m in ("wrong_uncal", "gigpo")]
    steps = bench.load_jsonl(tmp_path / "steps.jsonl")
    assert [(s["method"], s["step"]) for s in steps] == [
        ("wrong_uncal", 0), ("wrong_uncal", 1), ("gigpo", 0), ("gigpo", 1)]
    assert runs[0]["truth_spearman"] is not None and runs[1]["truth_spearman"] is None
    bench.report(runs, steps, args)
    assert "wrong_uncal" in capsys.readouterr().out
    bench.plot(steps, args, Path(args.plot))
    assert Path(args.plot).stat().st_size > 0

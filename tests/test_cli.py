"""CLI smoke tests: train end to end on a tiny config, errors, and --resume."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracerl.cli import main

TINY = ["tiny.hidden_size=32", "tiny.layers=1", "tiny.heads=2", "tiny.intermediate_size=64",
        "task.calls=1", "sft.demos=32", "sft.batch_size=16", "rl.tasks_per_step=2",
        "rl.group_size=2", "rl.max_turn_tokens=24", "rl.max_response_tokens=96",
        "eval.tasks=4", "log.progress=false", "log.checkpoint_every=2"]


def _train(tmp_path: Path, name: str, *extra: str) -> list[str]:
    return [f"out_dir={tmp_path}", f"name={name}", *TINY, *extra]


def test_train_writes_the_run_directory(tmp_path, capsys):
    assert main(["train", *_train(tmp_path, "smoke", "rl.steps=2")]) == 0
    run = tmp_path / "smoke"
    for f in ("config.yaml", "metrics.jsonl", "summary.json", "traces.sqlite", "curves.png"):
        assert (run / f).is_file(), f
    assert list((run / "tb").iterdir())
    summary = json.loads((run / "summary.json").read_text())
    for key in ("success_before", "success_after", "steps", "wall_seconds"):
        assert key in summary
    assert summary["steps"] == 2
    printed = json.loads(capsys.readouterr().out)
    assert printed["run_dir"] == str(run)


def test_config_errors_exit_2_naming_the_key(tmp_path, capsys):
    assert main(["train", *_train(tmp_path, "bad", "rl.stepz=3")]) == 2
    assert "unknown config key 'rl.stepz'" in capsys.readouterr().err


def test_missing_model_directory_is_reported(tmp_path, capsys):
    assert main(["train", *_train(tmp_path, "m", f"model={tmp_path}/nope")]) == 2
    assert "has no config.json" in capsys.readouterr().err


def test_help_lists_every_knob(capsys):
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert "rl.clip_high (float, default 0.28)" in out and "DAPO clip-higher" in out


def _rl_records(run: Path) -> list[dict]:
    lines = (run / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["stage"] == "rl"]


@pytest.mark.slow  # trains, is killed, and trains again
def test_interrupted_run_resumes_from_its_last_checkpoint(tmp_path):
    args = _train(tmp_path, "killed", "rl.steps=8")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "tracerl.cli", "train", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    latest = tmp_path / "killed" / "checkpoints" / "latest"
    deadline = time.time() + 240
    while time.time() < deadline and proc.poll() is None:
        if latest.is_file() and latest.read_text().endswith("step000004"):
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.02)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    run = tmp_path / "killed"
    assert not (run / "summary.json").exists()

    assert main(["train", "--resume", str(run), "log.progress=false"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] == 8
    steps = [r["step"] for r in _rl_records(run)]
    assert steps == list(range(1, 9))  # nothing lost, nothing logged twice

    # the resumed run continues exactly as an uninterrupted one would
    assert main(["train", *_train(tmp_path, "whole", "rl.steps=8")]) == 0
    whole = {r["step"]: r["reward_mean"] for r in _rl_records(tmp_path / "whole")}
    resumed = {r["step"]: r["reward_mean"] for r in _rl_records(run)}
    assert resumed == whole


def test_resume_needs_a_run_directory(tmp_path, capsys):
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err

"""A run's life from the CLI: fresh directories, resuming and extending, interruption,
pruning, progress and the messages that replace tracebacks."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tracerl.cli import main
from tracerl.train.threads import busy_cores, choose_threads

TINY = ["tiny.hidden_size=32", "tiny.layers=1", "tiny.heads=2", "tiny.intermediate_size=64",
        "sft.demos=16", "sft.batch_size=8", "rl.tasks_per_step=2", "rl.group_size=2",
        "rl.max_turn_tokens=16", "rl.max_response_tokens=64", "eval.tasks=2",
        "log.progress=false", "log.tensorboard=false", "trace.enabled=false"]


def _args(tmp_path: Path, name: str, *extra: str) -> list[str]:
    return ["train", f"out_dir={tmp_path}", f"name={name}", *TINY, *extra]


def _rl_steps(run: Path) -> list[int]:
    records = map(json.loads, (run / "metrics.jsonl").read_text().splitlines())
    return [r["step"] for r in records if r["stage"] == "rl"]


def test_a_second_run_with_the_same_name_gets_its_own_directory(tmp_path, capsys):
    assert main(_args(tmp_path, "r", "stages=[sft]")) == 0
    first = (tmp_path / "r" / "metrics.jsonl").read_text()
    capsys.readouterr()
    assert main(_args(tmp_path, "r", "stages=[sft]")) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["run_dir"] == str(tmp_path / "r-2")
    assert "exists: writing" in out.err or "r-2" in out.out
    assert (tmp_path / "r" / "metrics.jsonl").read_text() == first  # untouched
    assert "name: r-2" in (tmp_path / "r-2" / "config.yaml").read_text()
    assert main([*_args(tmp_path, "r", "stages=[sft]"), "--overwrite"]) == 0
    assert not (tmp_path / "r-3").exists()


def test_resuming_a_finished_run_with_more_steps_trains_on(tmp_path, capsys):
    run = tmp_path / "x"
    assert main(_args(tmp_path, "x", "rl.steps=2")) == 0
    assert main(["train", "--resume", str(run), "rl.steps=4", "log.progress=true"]) == 0
    assert json.loads((run / "summary.json").read_text())["steps"] == 4
    assert _rl_steps(run) == [1, 2, 3, 4]
    assert yaml.safe_load((run / "config.yaml").read_text())["rl"]["steps"] == 4
    capsys.readouterr()
    assert main(["train", "--resume", str(run), "log.progress=true"]) == 0
    assert "already finished (4 RL steps); nothing to do" in capsys.readouterr().err


def test_a_config_that_truncates_the_familys_episodes_warns(tmp_path, capsys):
    assert main(_args(tmp_path, "m", "task.family=maze", "rl.max_turns=5", "stages=[sft]",
                      "sft.demos=4", "log.progress=true")) == 0
    err = capsys.readouterr().err
    assert "needs up to 14 turns" in err and "rl.max_turns=5" in err


def test_checkpoints_are_pruned_keeping_the_best_and_the_rl_start(tmp_path):
    run = tmp_path / "p"
    assert main(_args(tmp_path, "p", "rl.steps=6", "log.checkpoint_every=1",
                      "log.keep_checkpoints=2", "eval.every=2")) == 0
    names = sorted(p.name for p in (run / "checkpoints").iterdir() if p.is_dir())
    best = (run / "checkpoints" / "best").read_text().strip()
    latest = (run / "checkpoints" / "latest").read_text().strip()
    assert {best, latest, "stage1-step000000"} <= set(names)
    assert len(names) <= 2 + 3  # the newest two, plus the latest, the best and the RL start


def test_malformed_yaml_is_a_message(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("rl:\n  steps: [3\n")
    assert main(["train", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml: not valid YAML at line" in err and "Traceback" not in err


def test_a_device_this_build_lacks_is_a_message(tmp_path, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main(_args(tmp_path, "d", "device=cuda")) == 2
    assert "sees no CUDA GPU; use device=cpu" in capsys.readouterr().err


def test_progress_lines_when_the_output_is_not_a_terminal(tmp_path, capsys):
    assert main(_args(tmp_path, "g", "rl.steps=2", "log.progress=true",
                      "log.progress_every_s=0")) == 0
    err = capsys.readouterr().err
    assert "SFT 2/2" in err and "RL 1/2" in err and "done in" in err
    assert "held-out success" in err
    (last,) = [line for line in err.splitlines() if line.startswith("RL 2/2")]  # once
    assert "done in" in last and "tok/s" in last


def test_a_users_reward_by_reference(tmp_path, monkeypatch):
    (tmp_path / "my_rewards.py").write_text("def always_one(trajectory):\n    return 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(_args(tmp_path, "u", "rl.steps=1", "reward=my_rewards:always_one",
                      "stages=[rl]")) == 0
    records = [json.loads(line) for line in (tmp_path / "u" / "metrics.jsonl").open()]
    assert [r["reward_mean"] for r in records if r["stage"] == "rl"] == [1.0]


def test_a_reward_that_cannot_be_imported_is_a_message(tmp_path, capsys):
    assert main(_args(tmp_path, "u", "reward=no_such_module:f")) == 2
    assert "cannot import 'no_such_module'" in capsys.readouterr().err


def test_thread_choice_leaves_busy_cores_alone():
    assert choose_threads(0, cores=2, load=0.1).threads == 2
    assert choose_threads(0, cores=2, load=1.2).threads == 1
    busy = choose_threads(0, cores=2, load=5.0)
    assert busy.threads == 1 and "oversubscribed" in (busy.warning() or "")
    assert choose_threads(3, cores=2, load=5.0).threads == 3
    assert choose_threads(0, cores=8, load=0.0).warning() is None
    assert choose_threads(0, cores=2, load=1.9).warning() is not None


def test_busy_cores_are_measured_now_not_read_from_the_lagging_load_average():
    """A process spinning on one core for half a second is seen (the 1-minute load
    average would still be near what it was on a quiet machine)."""
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        loaded = busy_cores(0.5)
    finally:
        spin.kill()
    assert 0.8 <= loaded <= (os.cpu_count() or 1) + 0.01


@pytest.mark.slow  # trains in a subprocess, interrupts it, resumes
def test_ctrl_c_saves_a_checkpoint_and_says_how_to_resume(tmp_path):
    run = tmp_path / "c"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "tracerl.cli",
                             *_args(tmp_path, "c", "rl.steps=100000",
                                    "log.checkpoint_every=100000")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            # a suite started in the background (`cmd &`) runs with SIGINT
                            # ignored, and children inherit that: give the run Ctrl-C back
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    started = run / "checkpoints" / "stage1-step000000"  # RL has begun
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not started.is_dir():
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert f"Resume with: tracerl train --resume {run}" in err
    assert "Traceback" not in err
    state = (run / "checkpoints" / "latest").read_text().strip()
    steps_done = int(state.rsplit("step", 1)[1])
    assert steps_done >= 0 and not (run / "summary.json").exists()
    assert main(["train", "--resume", str(run), "rl.steps=" + str(steps_done + 1)]) == 0
    assert json.loads((run / "summary.json").read_text())["steps"] == steps_done + 1


@pytest.mark.parametrize("bad, message", [
    ("task.family=no_such_module:Family", "cannot import 'no_such_module'"),
    ("reward=no_such_module:f", "cannot import 'no_such_module'"),
    ("task.family=json:no_such_attribute", "has no attribute 'no_such_attribute'"),
    ("task.family=json:dumps", "calling it with"),  # imports, but builds no family
])
def test_a_bad_reference_leaves_no_half_made_run_directory(tmp_path, capsys, bad, message):
    assert main(_args(tmp_path, "b", bad)) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "b").exists()  # so the corrected retry is `b`, not `b-2`


def test_overwrite_says_what_it_deletes(tmp_path, capsys):
    assert main(_args(tmp_path, "o", "stages=[sft]")) == 0
    capsys.readouterr()
    assert main([*_args(tmp_path, "o", "stages=[sft]"), "--overwrite"]) == 0
    err = capsys.readouterr().err
    assert f"--overwrite: deleted the earlier run in {tmp_path / 'o'}" in err
    assert "config.yaml" in err and "checkpoints/" in err


@pytest.mark.slow  # trains in a subprocess with tracing on, interrupts its process group
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_ctrl_c_to_the_process_group_is_quiet_and_loses_no_trace(tmp_path, mode):
    """A terminal's Ctrl-C reaches every process of the group, the tracing child (and the
    async rollout worker) too: none may print a traceback, nor the tracer be reported as
    failed (issue 33)."""
    run = tmp_path / "g"
    proc = subprocess.Popen([sys.executable, "-m", "tracerl.cli",
                             *_args(tmp_path, "g", "rl.steps=100000", "trace.enabled=true",
                                    "log.checkpoint_every=100000", f"rl.mode={mode}")],
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first_step = run / "metrics.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not (
            first_step.is_file() and '"stage": "rl"' in first_step.read_text()):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal does
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "not confirmed" not in err and "tracing process failed" not in err
    assert f"Resume with: tracerl train --resume {run}" in err

"""CLI smoke tests: train end to end on a tiny config, errors, and --resume; what each
command imports at start-up, and how each subcommand parses its arguments."""

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracerl.cli import COMMANDS, build_parser, main
from tracerl.cli import args as cli_args

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


# --- start-up: what each command imports, and that every subcommand still parses ---

HEAVY = ("torch", "transformers", "opentelemetry", "matplotlib")

# Runs tracerl.cli.main(argv) in a fresh interpreter; the last stdout line lists the
# heavy and tracerl.train modules it loaded.
_LOADED = """
import json, sys
from tracerl.cli import args as cli_args
from tracerl.cli import COMMANDS, build_parser, main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules
                        if m.split(".")[0] in {heavy!r} or m.startswith("tracerl.train"))))
"""


def _loaded_by(*argv: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", _LOADED.format(heavy=HEAVY), *argv],
                          capture_output=True, text=True, timeout=120)
    return json.loads(proc.stdout.splitlines()[-1])


def test_building_the_parser_imports_only_argparse_and_the_argument_module():
    code = ("import json, sys, tracerl.cli; tracerl.cli.build_parser(); "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tracerl'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=60)
    assert json.loads(proc.stdout) == ["tracerl", "tracerl.cli", "tracerl.cli.args"]


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["doctor", "--help"], ["eval", "--help"], ["traces", "--help"],
    ["export", "--help"],
    ["traces", "export", "--help"], ["audit", "--help"], ["train", "--bogus"],
], ids=" ".join)
def test_help_and_usage_errors_load_no_heavy_module(argv):
    assert _loaded_by(*argv) == []


def test_doctor_runs_without_torch_or_opentelemetry():
    assert _loaded_by("doctor", "--json") == []


def test_train_help_loads_only_the_config():
    loaded = _loaded_by("train", "--help")
    assert "tracerl.train.config" in loaded
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]


def test_eval_of_a_missing_path_says_so(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nope'} does not exist" in err and "--metric" not in err


def _parsed(*argv: str) -> dict:
    return vars(build_parser().parse_args(list(argv)))


@pytest.mark.parametrize("argv, expected", [
    (["train"], {"config": [], "resume": None, "module": "tracerl.cli.train"}),
    (["train", "c.yaml", "rl.steps=3", "--resume", "runs/x"],
     {"config": ["c.yaml", "rl.steps=3"], "resume": "runs/x"}),
    (["eval", "d.jsonl", "--metric", "bleu", "--metric", "contains", "--run", "r", "--json",
      "--out", "o.json", "--judge-url", "u", "--judge-model", "m"],
     {"data": "d.jsonl", "metric": ["bleu", "contains"], "run": "r", "json": True,
      "out": "o.json", "judge_url": "u", "judge_model": "m", "overrides": [], "tasks": 100,
      "k": 1, "temperature": 1.0, "seed": 0, "module": "tracerl.cli.eval"}),
    (["eval", "runs/x", "task.calls=2", "--tasks", "5", "--k", "4", "--temperature", "0.5",
      "--seed", "3"],
     {"data": "runs/x", "metric": [], "overrides": ["task.calls=2"], "tasks": 5, "k": 4,
      "temperature": 0.5, "seed": 3}),
    (["audit", "code_tests"],
     {"reward": "code_tests", "category": None, "timeout": 2.0, "json": False,
      "verbose": False, "module": "tracerl.cli.audit"}),
    (["audit", "m:r", "--category", "code", "--category", "math", "--timeout", "1.5",
      "--json", "--verbose"],
     {"reward": "m:r", "category": ["code", "math"], "timeout": 1.5, "json": True,
      "verbose": True}),
    (["doctor", "--json"], {"json": True, "module": "tracerl.cli.doctor"}),
    (["export", "runs/x"], {"run_dir": "runs/x", "out": None,
                            "module": "tracerl.cli.export"}),
    (["export", "runs/x", "--out", "m"], {"run_dir": "runs/x", "out": "m"}),
    (["traces", "list", "s", "--run", "r", "--step", "2", "--status", "done", "--tool", "t",
      "--min-reward", "0.5", "--max-reward", "1", "--limit", "3", "--runs", "--json"],
     {"traces_command": "list", "store": "s", "run": "r", "step": 2, "status": "done",
      "tool": "t", "min_reward": 0.5, "max_reward": 1.0, "limit": 3, "runs": True,
      "json": True, "module": "tracerl.cli.traces"}),
    (["traces", "show", "s", "abc", "--attributes"],
     {"traces_command": "show", "store": "s", "trace_id": "abc", "attributes": True}),
    (["traces", "export", "s", "--format", "otlp", "--out", "f"],
     {"traces_command": "export", "store": "s", "format": "otlp", "out": "f", "run": None}),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_every_subcommand_parses_its_arguments(argv, expected):
    parsed = _parsed(*argv)
    assert {k: parsed[k] for k in expected} == expected


@pytest.mark.parametrize("argv", [
    ["audit", "code_tests", "--category", "vibes"], ["traces", "export", "s", "--format", "csv"],
    ["traces"], ["eval"], ["doctor", "extra"], ["nope"],
], ids=" ".join)
def test_bad_arguments_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2


def test_every_command_module_has_run():
    for name, module, *_ in COMMANDS:
        assert callable(importlib.import_module(module).run), name


def test_the_argument_module_copies_agree_with_their_sources():
    from tracerl.cli.eval import METRICS
    from tracerl.rewards.hacks import CATEGORIES

    assert cli_args.METRIC_NAMES == tuple(METRICS)
    assert cli_args.HACK_CATEGORIES == CATEGORIES

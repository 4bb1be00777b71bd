import json

import pytest

from tracerl.cli import main

TINY = ["model.name=tiny", "tiny.hidden_size=64", "tiny.intermediate_size=128", "tiny.heads=2",
        "task.calc.calls=1", "data.train_tasks=2", "data.heldout_tasks=2", "data.example_pool=2",
        "rollout.max_turns=2", "rollout.max_turn_tokens=8", "rollout.max_response_tokens=32",
        "teacher.max_tokens=12", "budget.calls=30", "threads=1"]


@pytest.mark.slow
def test_optimize_writes_a_run_directory(tmp_path, capsys):
    code = main(["optimize", *TINY, f"out_dir={tmp_path}", "name=calc", "optimizer=protegi"])
    assert code == 0
    run = tmp_path / "calc"
    for name in ("config.yaml", "history.jsonl", "best_prompt.txt", "best_prompt.json",
                 "summary.json", "score.png", "traces.sqlite", "cache.sqlite", "budget.json"):
        assert (run / name).is_file(), name
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["spent"]["calls"] <= 30 and summary["run_dir"] == str(run)
    assert "optimize protegi" in err and "held-out" in err  # progress goes to stderr
    entries = (run / "history.jsonl").read_text().splitlines()
    assert json.loads(entries[0])["operation"] == "start"
    # A resumed finished search with the same budget makes no new call.
    assert main(["optimize", "--resume", str(run)]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["spent"]["calls"], again["spent"]["tokens"]) == (
        summary["spent"]["calls"], summary["spent"]["tokens"])
    assert again["best_prompt"] == summary["best_prompt"]


def test_config_and_data_errors_exit_2(tmp_path, capsys):
    assert main(["optimize", "budget.calls=0", f"out_dir={tmp_path}"]) == 2
    assert "budget.calls" in capsys.readouterr().err
    assert main(["optimize", "optimizer=annealing", f"out_dir={tmp_path}"]) == 2
    assert "optimizer" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["optimize", *TINY, f"data.jsonl={empty}", f"out_dir={tmp_path}"]) == 2
    assert "holds no tasks" in capsys.readouterr().err
    assert main(["optimize", "--resume", str(tmp_path / "nowhere")]) == 2

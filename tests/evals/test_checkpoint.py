import json
from math import comb

import pytest

from tracerl.cli import main
from tracerl.evals.passk import pass_at_k


def test_pass_at_k_hand_computed():
    assert pass_at_k(4, 0, 1) == 0.0
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    # n=4, c=1, k=2: 1 - C(3,2)/C(4,2) = 1 - 3/6
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - comb(3, 3) / comb(5, 3))
    assert pass_at_k(4, 3, 2) == 1.0
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)


@pytest.mark.parametrize("family", ["calc", "maze"])
def test_eval_scores_a_run_checkpoint_on_the_heldout_split(tmp_path, capsys, family):
    """The run's own family (from its config.yaml) is what `tracerl eval RUN` scores."""
    args = [f"out_dir={tmp_path}", "name=r", "tiny.hidden_size=32", "tiny.layers=1",
            "tiny.heads=2", "tiny.intermediate_size=64", "sft.demos=16", "sft.batch_size=8",
            "stages=[sft]", "eval.tasks=2", "log.progress=false", "trace.enabled=false",
            f"task.family={family}", "rl.max_turns=14", "rl.max_turn_tokens=24"]
    assert main(["train", *args]) == 0
    capsys.readouterr()
    assert main(["eval", str(tmp_path / "r"), "--tasks", "3", "--k", "2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["family"] == family and report["tasks"] == 3
    assert report["samples_per_task"] == 2
    assert 0.0 <= report["pass_at_1"] <= report["pass_at_k"] <= 1.0
    assert report["model"].endswith(tuple("0123456789"))  # the latest checkpoint dir


def test_eval_rejects_a_bad_override(tmp_path, capsys):
    (tmp_path / "config.json").write_text("{}")
    assert main(["eval", str(tmp_path), "task.callz=2"]) == 2
    assert "unknown config key 'task.callz'" in capsys.readouterr().err


@pytest.mark.slow  # loads SmolLM2-135M (and builds it the first time, about 40 s)
def test_eval_takes_a_pretrained_model_by_name(smollm2_dir, capsys):
    args = ["eval", "smollm2-135m", "rl.max_turns=1", "rl.max_turn_tokens=8", "--tasks", "1",
            "--temperature", "0", "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"] == "smollm2-135m" and report["samples_per_task"] == 1


def test_eval_of_a_missing_path_names_the_model_names(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "nope")]) == 2
    assert "smollm2-135m" in capsys.readouterr().err


def test_eval_on_a_named_family_scores_each_fixed_task_once(tmp_path, capsys):
    """A run of stages=[sft,rl] on humaneval (SFT on demonstrations of its train ids),
    then `--family humaneval`: each of the first held-out ids once, every task's passes
    in the JSON report."""
    args = [f"out_dir={tmp_path}", "name=r", "tiny.hidden_size=32", "tiny.layers=1",
            "tiny.heads=2", "tiny.intermediate_size=64", "sft.demos=4", "sft.batch_size=4",
            "stages=[sft,rl]", "rl.steps=1", "rl.tasks_per_step=2", "rl.group_size=2",
            "eval.tasks=1", "log.progress=false", "trace.enabled=false",
            "task.family=humaneval", "rl.max_turns=1", "rl.max_turn_tokens=8",
            "rl.max_response_tokens=8"]
    assert main(["train", *args]) == 0
    capsys.readouterr()
    out = tmp_path / "he.json"
    assert main(["eval", str(tmp_path / "r"), "--family", "humaneval", "--tasks", "3",
                 "--k", "2", "--out", str(out)]) == 0
    assert "pass@2 " in capsys.readouterr().out  # labelled with its k (issue 33)
    report = json.loads(out.read_text())
    assert report["family"] == "humaneval" and report["samples_per_task"] == 2
    assert [t["task_id"] for t in report["per_task"]] == [
        "HumanEval/1", "HumanEval/2", "HumanEval/6"]
    assert report["pass_at_1"] == sum(t["passed"] for t in report["per_task"]) / 6


def test_family_is_for_checkpoint_mode(tmp_path, capsys):
    data = tmp_path / "c.jsonl"
    data.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    assert main(["eval", str(data), "--metric", "exact_match", "--family", "humaneval"]) == 2
    assert "--family" in capsys.readouterr().err

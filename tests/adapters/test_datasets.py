import asyncio
import json

import pytest
from datasets import Dataset

from tracerl.adapters.datasets import (
    ComputeScoreReward,
    prompt_family,
    read_prompt_dataset,
    read_rows,
)
from tracerl.envs.base import check_env
from tracerl.types import Message, Trajectory, Turn

QUESTION = "Natalia sold clips to 48 of her friends in April, and then she sold half as many"


def verl_rows(n=3):
    """Rows as verl's examples/data_preprocess/gsm8k.py builds them."""
    return [{
        "data_source": "openai/gsm8k",
        "prompt": [{"role": "user", "content": f"{QUESTION} ({i}). Let's think step by step "
                                               "and output the final answer after \"####\"."}],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": str(72 + i)},
        "extra_info": {"split": "train", "index": i, "answer": "... #### 72",
                       "question": QUESTION},
    } for i in range(n)]


def test_verl_parquet_becomes_tasks(tmp_path):
    path = tmp_path / "train.parquet"
    Dataset.from_list(verl_rows()).to_parquet(str(path))  # how verl writes its data
    tasks = read_prompt_dataset(path)
    assert [t.id for t in tasks] == ["openai/gsm8k-0", "openai/gsm8k-1", "openai/gsm8k-2"]
    assert [t.answer for t in tasks] == ["72", "73", "74"]
    assert tasks[0].messages[0].role == "user" and QUESTION in tasks[0].messages[0].content
    assert tasks[1].metadata["data_source"] == "openai/gsm8k"
    assert tasks[1].metadata["extra_info"]["index"] == 1


def test_trl_jsonl_standard_and_conversational(tmp_path):
    path = tmp_path / "prompts.jsonl"
    Dataset.from_list([{"prompt": "What is 2+2?", "solution": "4"},
                       {"prompt": "What is 3+3?", "solution": "6"}]).to_json(str(path))
    standard = read_prompt_dataset(path)
    assert standard[0].messages == (Message("user", "What is 2+2?"),)
    assert [t.answer for t in standard] == ["4", "6"] and standard[1].id == "prompts-1"
    conv = tmp_path / "conv.jsonl"
    conv.write_text(json.dumps({"prompt": [{"role": "system", "content": "Be brief."},
                                           {"role": "user", "content": "2+2?"}],
                                "answer": 4, "id": "q1"}) + "\n")
    (task,) = read_prompt_dataset(conv)
    assert [m.role for m in task.messages] == ["system", "user"]
    assert task.answer == 4 and task.id == "conv-q1"


@pytest.mark.parametrize("rows, message", [
    ([{"question": "x"}], "no 'prompt' column"),
    ([{"prompt": 5}], "'prompt' must be a string"),
    ([{"prompt": [{"content": "no role"}]}], "bad message"),
    ([{"prompt": "a", "id": 1}, {"prompt": "b", "id": 1}], "share the task id"),
])
def test_bad_rows_are_named(tmp_path, rows, message):
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match=message):
        read_prompt_dataset(path)


def test_unknown_formats_and_missing_files(tmp_path):
    (tmp_path / "x.csv").write_text("prompt\nhi\n")
    with pytest.raises(ValueError, match="unknown dataset format"):
        read_rows(tmp_path / "x.csv")
    with pytest.raises(FileNotFoundError):
        read_rows(tmp_path / "missing.jsonl")


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """A verl-style scorer returning a dict, as verl's own may."""
    answer = solution_str.split("####")[-1].strip()
    return {"score": float(answer == ground_truth), "acc": answer == ground_truth}


def test_a_verl_compute_score_is_a_reward_and_the_family_runs(tmp_path):
    path = tmp_path / "train.jsonl"
    Dataset.from_list(verl_rows(40)).to_json(str(path))
    tasks = read_prompt_dataset(path)
    reward = ComputeScoreReward(compute_score)
    traj = Trajectory(task=tasks[0], prompt_ids=[], turns=[Turn([], [], "so #### 72")])
    assert reward(traj) == 1.0
    family = prompt_family(tasks, reward, heldout_fraction=0.25)
    train, heldout = family.splits["train"], family.splits["heldout"]
    assert train and heldout and not {t.id for t in train} & {t.id for t in heldout}
    asyncio.run(check_env(family.make_env, tasks[0], ["#### 72"]))

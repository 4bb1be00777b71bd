import gzip
import json

import pytest

from tracerl.envs.humaneval.data import load_problems, split_problems

HELD_OUT_HEAD = [1, 2, 6, 14, 21, 24, 25, 26, 32, 35]  # seed 0, half held out (docs/humaneval.md)


def test_the_wheel_holds_humanevals_164_problems():
    problems = load_problems()
    assert len(problems) == 164
    assert [p.number for p in problems] == list(range(164))
    assert all("def check(candidate)" in p.test for p in problems)


def test_the_split_is_by_id_disjoint_and_pinned():
    problems = load_problems()
    held = split_problems(problems, "held_out")
    train = split_problems(problems, "train")
    assert (len(held), len(train)) == (78, 86)
    assert not {p.task_id for p in held} & {p.task_id for p in train}
    assert [p.number for p in held[:10]] == HELD_OUT_HEAD
    # the side of an id does not depend on which other problems are in the list
    assert split_problems(list(reversed(problems[:40])), "held_out") == [
        p for p in held if p.number < 40]
    assert [p.number for p in split_problems(problems, "held_out", seed=1)[:10]] != HELD_OUT_HEAD


def test_hidden_tests_carry_the_prompts_helpers_but_not_the_stub():
    p = next(p for p in load_problems() if p.task_id == "HumanEval/38")
    assert "def encode_cyclic" in p.hidden_tests
    assert "def decode_cyclic" not in p.hidden_tests
    assert p.hidden_tests.endswith(p.test)


def test_a_bad_file_names_the_line(tmp_path):
    path = tmp_path / "he.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps({"task_id": "HumanEval/0", "prompt": "def f():\n"}) + "\n")
    with pytest.raises(ValueError, match=r"he.jsonl.gz:1: HumanEval fields .*entry_point"):
        load_problems(path)
    with pytest.raises(ValueError, match="held_out_fraction"):
        split_problems([], "held_out", held_out_fraction=1.0)

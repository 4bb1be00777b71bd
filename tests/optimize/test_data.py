import json

import pytest

from tracerl.envs.calc import CalcFamily
from tracerl.optimize.data import DataError, family_data, jsonl_data


def test_family_pool_and_search_tasks_are_disjoint_and_heldout_apart():
    data = family_data(CalcFamily(calls=1, skip_tool_prob=0.0), train=5, heldout=4, pool=3,
                       seed=0)
    assert len(data.train) == 5 and len(data.heldout) == 4 and len(data.examples) == 3
    assert not {t.id for t in data.train} & set(data.examples)
    example = next(iter(data.examples.values()))
    assert example[0].role == "user" and example[-1].content.startswith("Answer:")


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_splits_pool_and_caps(tmp_path):
    rows = [{"id": f"q{i}", "prompt": f"Compute {i}*2.", "answer": str(2 * i), "split": "train",
             **({"demonstration": [{"role": "assistant", "content": f"Answer: {2 * i}"}]}
                if i < 2 else {})} for i in range(6)]
    rows.append({"id": "h", "messages": [{"role": "user", "content": "Compute 9*2."}],
                 "answer": "18", "split": "heldout"})
    data = jsonl_data(_write(tmp_path / "t.jsonl", rows), train=3, heldout=5, pool=2, seed=0)
    assert sorted(data.examples) == ["q0", "q1"] and len(data.train) == 3
    assert [t.id for t in data.heldout] == ["h"]


def test_empty_and_bad_data_are_clear_errors(tmp_path):
    with pytest.raises(DataError, match="holds no tasks"):
        jsonl_data(_write(tmp_path / "empty.jsonl", []), 4, 4, 0, 0)
    with pytest.raises(DataError, match=r"bad.jsonl:2: a task needs 'prompt'"):
        jsonl_data(_write(tmp_path / "bad.jsonl", [{"prompt": "a"}, {"answer": 1}]), 4, 4, 0, 0)
    with pytest.raises(DataError, match="no held-out tasks"):
        jsonl_data(_write(tmp_path / "train.jsonl", [{"prompt": "a", "split": "train"}]),
                   4, 4, 0, 0)
    with pytest.raises(DataError, match="not a file"):
        jsonl_data(tmp_path / "missing.jsonl", 4, 4, 0, 0)

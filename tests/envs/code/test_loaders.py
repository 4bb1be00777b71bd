"""HumanEval- and MBPP-shaped JSONL loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tracerl.envs.code import load_humaneval, load_mbpp
from tracerl.rewards import code_tests
from tracerl.sandbox import SandboxPool

HUMANEVAL_ROW = {
    "task_id": "HE/0",
    "prompt": "def double(x):\n    \"\"\"Return twice x.\"\"\"\n",
    "canonical_solution": "    return 2 * x\n",
    "test": "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(-1) == -2\n",
    "entry_point": "double",
}
MBPP_ROW = {
    "task_id": 7,
    "text": "Write a function to square a number.",
    "code": "def square(n):\n    return n * n\n",
    "test_list": ["assert square(3) == 9", "assert square(-2) == 4"],
}


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_humaneval_shape_loads_and_its_solution_passes(tmp_path: Path, pool: SandboxPool) -> None:
    (p,) = load_humaneval(write_jsonl(tmp_path / "he.jsonl", [HUMANEVAL_ROW]))
    assert (p.id, p.entry_point, p.source) == ("HE/0", "double", "humaneval")
    assert code_tests(p.solution, p.hidden_tests, entry_point=p.entry_point, pool=pool).score == 1.0


def test_mbpp_shape_loads_and_its_solution_passes(tmp_path: Path, pool: SandboxPool) -> None:
    (p,) = load_mbpp(write_jsonl(tmp_path / "mbpp.jsonl", [MBPP_ROW]))
    assert p.id == "mbpp-7" and p.hidden_tests == tuple(MBPP_ROW["test_list"])
    assert code_tests(p.solution, list(p.hidden_tests), pool=pool).score == 1.0


def test_missing_field_is_named_in_the_error(tmp_path: Path) -> None:
    row = {k: v for k, v in MBPP_ROW.items() if k != "code"}
    with pytest.raises(ValueError, match="missing field 'code'"):
        load_mbpp(write_jsonl(tmp_path / "bad.jsonl", [row]))


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(MBPP_ROW) + "\n{not json\n")
    with pytest.raises(ValueError, match="broken.jsonl:2"):
        load_mbpp(path)

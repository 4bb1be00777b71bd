"""Programming problems with hidden tests: the built-in set and HumanEval/MBPP-shaped files.

The built-in problems (problems.jsonl, written for tracerl) each carry a reference
solution and hidden tests: assert statements, test functions, or stdin/stdout cases.
Local datasets in the HumanEval shape (prompt, test, entry_point, canonical_solution)
or the MBPP shape (text, code, test_list) load into the same CodeProblem record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tracerl.rewards.testspec import IOCase

BUILTIN_PATH = Path(__file__).with_name("problems.jsonl")
Source = Literal["tracerl", "humaneval", "mbpp"]


@dataclass(frozen=True)
class CodeProblem:
    """One programming problem; exactly one of `tests` / `io` is set."""

    id: str
    prompt: str
    solution: str
    """A reference solution that passes the hidden tests."""
    tests: str | tuple[str, ...] | None = None
    """Hidden tests: a code block or a list of assert snippets."""
    io: tuple[IOCase, ...] | None = None
    """Hidden stdin/stdout cases, for whole-program problems."""
    entry_point: str | None = None
    difficulty: str = "unknown"
    source: Source = "tracerl"

    def __post_init__(self) -> None:
        if (self.tests is None) == (self.io is None):
            raise ValueError(f"problem {self.id!r} needs exactly one of tests or io")

    @property
    def hidden_tests(self) -> Any:
        """What code_tests takes as `tests`."""
        return list(self.io) if self.io is not None else self.tests


def _read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}:{n}: not valid JSON ({exc})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{n}: expected a JSON object per line")
            yield n, row


def _need(row: dict[str, Any], key: str, where: str) -> Any:
    if key not in row:
        raise ValueError(f"{where}: missing field {key!r}")
    return row[key]


def _load(path: str | Path, build: Callable[[dict[str, Any], str, int], CodeProblem]
          ) -> list[CodeProblem]:
    """Build one CodeProblem per JSONL row; `build` gets the row, "file:line" and line no."""
    return [build(row, f"{path}:{n}", n) for n, row in _read_jsonl(path)]


def _tracerl_row(row: dict[str, Any], where: str, n: int) -> CodeProblem:
    io = row.get("io")
    return CodeProblem(
        id=str(_need(row, "id", where)), prompt=_need(row, "prompt", where),
        solution=_need(row, "solution", where), tests=row.get("tests"),
        io=tuple(IOCase(c["input"], c["output"]) for c in io) if io is not None else None,
        entry_point=row.get("entry_point"), difficulty=row.get("difficulty", "unknown"),
    )


def _humaneval_row(row: dict[str, Any], where: str, n: int) -> CodeProblem:
    prompt = _need(row, "prompt", where)
    return CodeProblem(
        id=str(row.get("task_id", f"humaneval-{n}")),
        prompt=f"Complete this function:\n\n{prompt}",
        solution=prompt + _need(row, "canonical_solution", where),
        tests=_need(row, "test", where), entry_point=_need(row, "entry_point", where),
        source="humaneval",
    )


def _mbpp_row(row: dict[str, Any], where: str, n: int) -> CodeProblem:
    tests = _need(row, "test_list", where)
    if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
        raise ValueError(f"{where}: test_list must be a list of strings")
    setup = row.get("test_setup_code") or ""
    return CodeProblem(
        id=f"mbpp-{row.get('task_id', n)}", prompt=_need(row, "text", where),
        solution=_need(row, "code", where),
        tests=(setup + "\n" + "\n".join(tests)) if setup else tuple(tests),
        source="mbpp",
    )


def load_problems(path: str | Path = BUILTIN_PATH) -> list[CodeProblem]:
    """Problems in tracerl's own JSONL shape (the built-in set by default)."""
    return _load(path, _tracerl_row)


def load_humaneval(path: str | Path) -> list[CodeProblem]:
    """A local JSONL file in the HumanEval shape; the prompt is the function stub."""
    return _load(path, _humaneval_row)


def load_mbpp(path: str | Path) -> list[CodeProblem]:
    """A local JSONL file in the MBPP shape; test_list asserts are the hidden tests."""
    return _load(path, _mbpp_row)

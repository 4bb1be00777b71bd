"""A task family bundles what training on one kind of problem needs.

TaskSet (seeded, with disjoint train and held-out splits), an EnvFactory, the outcome
Reward, and an oracle that writes demonstrations for SFT.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from tracerl.envs.base import Env
from tracerl.rewards.base import Reward
from tracerl.types import Message, Task

Split = Literal["train", "heldout"]


class TaskFamily(Protocol):
    name: str
    reward: Reward

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        """`n` tasks of `split`, reproducible from `seed`; splits never overlap."""
        ...

    def make_env(self) -> Env: ...

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        """An oracle conversation solving `task` (the assistant and tool messages)."""
        ...


# Optional extras a family may offer, read with getattr by the trainer:
#   max_turns: int                 turns the longest episode needs (warned against rl.max_turns)
#   subgoal(trajectory, turn) -> float | None    the credit.evaluator=subgoal check
#   state_key(...)                 anchor states for gigpo


class FamilyWithReward:
    """A family whose outcome reward is replaced (`reward=module:function` in the config)."""

    def __init__(self, family: TaskFamily, reward: Reward) -> None:
        self.family = family
        self.reward = reward
        self.name = family.name

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        return self.family.tasks(split, n, seed)

    def make_env(self) -> Env:
        return self.family.make_env()

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        return self.family.demonstration(task, rng)

    def __getattr__(self, name: str) -> Any:  # optional extras: max_turns, subgoal, ...
        return getattr(self.family, name)


class TaskListFamily:
    """A family from an env factory, fixed train and held-out task lists, and a reward:
    the Python API's way to train on tasks you already have (no registry needed).

    `tasks(split, n, seed)` samples `n` tasks of the split (with replacement when `n`
    exceeds the list), reproducibly from `seed`. `demonstration` is optional: without
    it, stages must not include `sft`.
    """

    def __init__(self, make_env: Callable[[], Env], train: Sequence[Task],
                 heldout: Sequence[Task], reward: Reward, name: str = "tasks",
                 demonstration: Callable[[Task, random.Random], list[Message]] | None = None
                 ) -> None:
        if not train or not heldout:
            raise ValueError("TaskListFamily needs at least one train and one held-out task")
        overlap = {t.id for t in train} & {t.id for t in heldout}
        if overlap:
            raise ValueError(f"TaskListFamily: train and held-out share task ids "
                             f"{sorted(overlap)[:5]}")
        self._make_env = make_env
        self.splits = {"train": list(train), "heldout": list(heldout)}
        self.reward = reward
        self.name = name
        self._demonstration = demonstration

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        pool = self.splits[split]
        rng = random.Random(f"{self.name}/{split}/{seed}")
        return rng.sample(pool, n) if n <= len(pool) else [rng.choice(pool) for _ in range(n)]

    def make_env(self) -> Env:
        return self._make_env()

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        if self._demonstration is None:
            raise ValueError(f"family {self.name!r} has no demonstrations: drop the sft "
                             "stage (stages=[rl]) or pass demonstration=")
        return self._demonstration(task, rng)

"""A task family bundles what training on one kind of problem needs.

TaskSet (seeded, with disjoint train and held-out splits), an EnvFactory, the outcome
Reward, and an oracle that writes demonstrations for SFT.
"""

from __future__ import annotations

import random
from typing import Literal, Protocol

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

"""Fixtures of the train tests."""

import random

import pytest

from tracerl.envs.tool_env import ToolEnv
from tracerl.types import Message, Task, Trajectory


class ParityReward:
    """1 for an even number of characters in the first action: varies from the start."""

    name = "parity"

    def __call__(self, t: Trajectory) -> float:
        return float(len(t.turns[0].info["content"]) % 2 == 0)


class ParityFamily:
    name = "parity"
    reward = ParityReward()

    def tasks(self, split: str, n: int, seed: int) -> list[Task]:
        return [Task(f"{split}-{seed}-{i}", (Message("user", f"Say {i}"),)) for i in range(n)]

    def make_env(self) -> ToolEnv:
        return ToolEnv([])

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        return [Message("assistant", "ab")]


@pytest.fixture
def parity_family() -> ParityFamily:
    """A family whose reward varies from the first step (the length of the first action
    is even or odd), so a group baseline has something to learn from at once."""
    return ParityFamily()

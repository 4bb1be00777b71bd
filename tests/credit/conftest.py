"""Fixtures for the credit tests: a scripted maze policy behind the sampler interface, so
the real RolloutRunner, env and reward run end to end without training a model: it reads
the last offset the env showed ("4,5 +3-2") from the token context and moves towards the
goal, or with probability `noise` in a random direction. Monte Carlo values of its states
are then known to favour progress moves, which is what calibration tests need.

The helpers are served as fixtures that return the function (`maze_runner`, `play`,
`toward`), so that no test module imports another module of the test tree."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable

import pytest

from tracerl.envs.maze import MazeFamily
from tracerl.policy.model import STOP_TOKENS
from tracerl.policy.sampler import Sample, SamplingParams
from tracerl.policy.tokenizer import build_char_tokenizer
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.types import Trajectory

OFFSET = re.compile(r"([+-]\d+)([+-]\d+)\)?\.?<\|im_end\|>")


class ScriptedMazeSampler:
    def __init__(self, renderer: ChatRenderer, noise: float, seed: int = 0) -> None:
        self.renderer = renderer
        self.noise = noise
        self.rng = random.Random(seed)

    def move(self, context_text: str) -> str:
        dx, dy = (int(v) for v in OFFSET.findall(context_text)[-1])
        if self.rng.random() < self.noise:
            return self.rng.choice("NESW")
        if dx:
            return "E" if dx > 0 else "W"
        return "N" if dy > 0 else "S"

    def generate(self, contexts: list[list[int]], params: SamplingParams,
                 budgets: list[int] | None = None) -> list[Sample]:
        out = []
        for c in contexts:
            text = f'<tool_call>{{"name": "{self.move(self.renderer.decode(c))}"}}</tool_call>'
            ids = self.renderer.encode(text)
            out.append(Sample(ids, [0.0] * len(ids), "stop"))
        return out


def _maze_runner(noise: float, group_size: int = 4, seed: int = 0,
                family: MazeFamily | None = None, max_turns: int = 12,
                max_response_tokens: int = 2000) -> tuple[RolloutRunner, MazeFamily]:
    family = family or MazeFamily(min_moves=8, max_moves=8, slack=2)
    tok = build_char_tokenizer()
    renderer = ChatRenderer(tok)
    stops = tuple(tok.convert_tokens_to_ids(s) for s in STOP_TOKENS)
    runner = RolloutRunner(ScriptedMazeSampler(renderer, noise, seed), renderer, stops,
                           family.make_env, family.reward,
                           RolloutConfig(group_size=group_size, max_turns=max_turns,
                                         max_turn_tokens=40,
                                         max_response_tokens=max_response_tokens))
    return runner, family


def _play(family: MazeFamily, moves: str, task_index: int = 0) -> Trajectory:
    """A trajectory that makes exactly `moves` (a string of N/E/S/W) on a train task."""
    runner, _ = _maze_runner(0.0, group_size=1, family=family, max_turns=len(moves),
                             max_response_tokens=4000)
    scripted = iter(moves)
    runner.sampler.move = lambda _text: next(scripted)  # type: ignore[attr-defined]
    task = family.tasks("train", task_index + 1, seed=0)[task_index]
    return asyncio.run(runner.arun([task]))[0].trajectories[0]


def _toward(family: MazeFamily, task_index: int = 0) -> tuple[str, str]:
    """(a move towards the goal along x, the opposite move) for a train task."""
    task = family.tasks("train", task_index + 1, seed=0)[task_index]
    start, goal = task.metadata["start"], task.metadata["goal"]
    good = "E" if int(goal.split(",")[0]) > int(start.split(",")[0]) else "W"
    return good, {"E": "W", "W": "E"}[good]


@pytest.fixture(scope="session")
def maze_runner() -> Callable[..., tuple[RolloutRunner, MazeFamily]]:
    """`maze_runner(noise, group_size=4, seed=0, family=None)`: a real RolloutRunner whose
    sampler is the scripted maze policy, and the MazeFamily it plays."""
    return _maze_runner


@pytest.fixture(scope="session")
def play() -> Callable[..., Trajectory]:
    """`play(family, moves, task_index=0)`: the trajectory that makes exactly `moves`."""
    return _play


@pytest.fixture(scope="session")
def toward() -> Callable[..., tuple[str, str]]:
    """`toward(family, task_index=0)`: (a move towards the goal along x, its opposite)."""
    return _toward

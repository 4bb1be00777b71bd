import asyncio
import random
import re
from pathlib import Path

import pytest

from tracerl.envs.base import check_env
from tracerl.envs.maze import MazeConfig, MazeFamily, distance, parse_cell
from tracerl.policy.tokenizer import build_char_tokenizer
from tracerl.rollout.demos import trajectory_from_messages
from tracerl.rollout.render import ChatRenderer


def test_tasks_need_the_configured_number_of_moves():
    family = MazeFamily(min_moves=8, max_moves=12)
    for task in family.tasks("train", 30, seed=3):
        start, goal = parse_cell(task.metadata["start"]), parse_cell(task.metadata["goal"])
        assert 8 <= distance(start, goal) <= 12


def test_splits_never_overlap():
    family = MazeFamily()
    key = lambda t: (t.metadata["start"], t.metadata["goal"])  # noqa: E731
    train = {key(t) for t in family.tasks("train", 300, seed=0)}
    heldout = {key(t) for t in family.tasks("heldout", 100, seed=0)}
    assert not train & heldout


def _demo_actions(family, task, seed=0):
    return [m.content for m in family.demonstration(task, random.Random(seed))
            if m.role == "assistant"]


def test_the_env_passes_check_env_on_a_demonstration():
    family = MazeFamily(detour_prob=0.0)
    task = family.tasks("train", 1, seed=0)[0]
    asyncio.run(check_env(family.make_env, task, _demo_actions(family, task)))


def test_a_demonstration_reaches_the_goal_in_the_env():
    family = MazeFamily(detour_prob=0.5)
    task = family.tasks("train", 1, seed=1)[0]

    async def walk() -> bool:
        env = family.make_env()
        await env.reset(task)
        for action in _demo_actions(family, task, seed=2):
            result = await env.step(action)
        return result.terminated and env.position == env.goal

    assert asyncio.run(walk())


def test_the_move_budget_truncates_a_wandering_agent():
    family = MazeFamily(min_moves=8, max_moves=8, slack=0)
    task = family.tasks("train", 1, seed=0)[0]

    async def wander() -> int:
        env = family.make_env()
        await env.reset(task)
        for n in range(1, 20):
            result = await env.step('<tool_call>{"name": "N"}</tool_call>')
            if result.truncated or result.terminated:
                return n
        return -1

    assert asyncio.run(wander()) == 8


def test_demonstration_trajectories_are_short_enough_for_the_tiny_policy():
    family = MazeFamily(min_moves=8, max_moves=12)
    renderer = ChatRenderer(build_char_tokenizer())
    task = family.tasks("train", 1, seed=0)[0]
    demo = family.demonstration(task, random.Random(0))
    traj = trajectory_from_messages(renderer, task, list(task.messages), demo)
    assert 8 <= len(traj.turns) <= 14
    assert len(traj.token_ids()) < 60 * len(traj.turns)


def test_positions_ignore_failed_moves():
    family = MazeFamily(size=10, min_moves=8, max_moves=8)
    task = next(t for t in family.tasks("train", 50, seed=0)
                if t.metadata["start"].endswith(",9"))

    async def bump():
        env = family.make_env()
        await env.reset(task)
        return await env.step('<tool_call>{"name": "N"}</tool_call>')

    result = asyncio.run(bump())
    assert not result.tool_results[0].ok and "wall" in result.tool_results[0].content


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="min_moves"):
        MazeFamily(size=4, min_moves=8, max_moves=8)




def test_the_readme_states_the_default_mazes_calls_and_the_max_turns_they_need():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    turns, low, high = map(int, re.search(
        r"task\.family=maze rl\.max_turns=(\d+)` \((\d+)-(\d+) tool calls", readme).groups())
    section = MazeConfig()
    family = MazeFamily(section.size, section.min_moves, section.max_moves, section.slack)
    assert (low, high) == (section.min_moves, family.max_turns) and turns >= family.max_turns

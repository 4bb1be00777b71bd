import asyncio
import random

import pytest

from tracerl.envs.base import check_env
from tracerl.envs.doors import (
    FILLER,
    KEYS,
    DoorsFamily,
    DoorState,
    advance,
    filler_rate,
    key_for,
    success_probability,
    walk,
)
from tracerl.envs.registry import FamilyContext, build_family
from tracerl.types import Task, Trajectory, Turn


def _play(task: Task, actions: list[str]) -> Trajectory:
    """A trajectory whose turns took `actions` (the env's reading of a turn's text)."""
    turns = [Turn([1], [0.0], f"{a}<|im_end|>") for a in actions]
    return Trajectory(task, [0], turns=turns)


def _solve(task: Task) -> list[str]:
    return [key_for(s) for s in task.metadata["signs"]]


def _wrong(sign: str) -> str:
    return next(k for k in KEYS if k != key_for(sign))


def test_a_hard_sign_asks_for_the_next_key_round_the_ring():
    assert [key_for(s) for s in "abcdABCD"] == list("abcdbcda")


def test_tasks_are_reproducible_and_the_splits_never_overlap():
    family = DoorsFamily()
    assert family.tasks("train", 20, seed=3) == family.tasks("train", 20, seed=3)
    assert family.tasks("train", 20, seed=3) != family.tasks("train", 20, seed=4)
    train = {t.metadata["signs"] for t in family.tasks("train", 400, seed=0)}
    heldout = {t.metadata["signs"] for t in family.tasks("heldout", 100, seed=0)}
    assert not train & heldout
    assert all(16 <= len(s) <= 20 for s in train | heldout)
    share = sum(c.isupper() for s in train for c in s) / sum(len(s) for s in train)
    assert 0.45 < share < 0.55


@pytest.mark.slow  # imports every built-in family (about 2 s alone)
def test_the_registry_builds_it_from_its_section():
    family = build_family("doors", None, FamilyContext())
    assert isinstance(family, DoorsFamily) and family.max_turns == 40


def test_a_demonstration_passes_check_env_and_earns_the_reward():
    family = DoorsFamily(filler_prob=0.4, mistake_prob=0.5, hard_mistake_prob=0.5)
    for seed, task in enumerate(family.tasks("train", 5, seed=1)):
        demo = family.demonstration(task, random.Random(seed))
        actions = [m.content for m in demo if m.role == "assistant"]
        asyncio.run(check_env(family.make_env, task, actions))
        trajectory = _play(task, actions)
        assert family.reward(trajectory) == 1.0
        assert walk(trajectory)[-1].mistakes <= family.slack
        assert FILLER in actions


def test_filler_changes_nothing_and_costs_nothing():
    """The same keys with waits anywhere reach the same states and the same reward."""
    family = DoorsFamily()
    task = family.tasks("train", 1, seed=0)[0]
    signs = task.metadata["signs"]
    keys = _solve(task)
    keys[3] = _wrong(signs[3])  # a mistake, then the right key
    keys.insert(4, key_for(signs[3]))
    rng = random.Random(0)
    padded: list[str] = []
    for k in keys:
        padded += [FILLER] * rng.randrange(3) + [k]
    plain, waited = _play(task, keys), _play(task, padded)
    assert family.reward(plain) == family.reward(waited) == 1.0
    no_wait = [s for s, a in zip(walk(waited)[1:], padded, strict=True) if a != FILLER]
    assert no_wait == walk(plain)[1:]
    assert filler_rate([waited]) == padded.count(FILLER) / len(padded)


def test_the_env_shows_the_same_sign_after_filler_and_after_a_mistake():
    family = DoorsFamily()
    task = family.tasks("train", 1, seed=2)[0]
    signs = task.metadata["signs"]

    async def run() -> list[str]:
        env = family.make_env()
        await env.reset(task)
        shown = []
        for a in [FILLER, _wrong(signs[0]), key_for(signs[0])]:
            result = await env.step(a + "<|im_end|>")
            shown.append(result.observations[0].content)
        return shown

    assert asyncio.run(run()) == [signs[0], signs[0], signs[1]]


def test_one_mistake_beyond_the_slack_fails_the_episode():
    family = DoorsFamily(slack=2)
    task = family.tasks("train", 1, seed=0)[0]
    sign = task.metadata["signs"][0]

    async def run(mistakes: int) -> tuple[bool, bool]:
        env = family.make_env()
        await env.reset(task)
        for _ in range(mistakes):
            result = await env.step(_wrong(sign))
        return result.terminated, result.truncated

    assert asyncio.run(run(2)) == (False, False)
    assert asyncio.run(run(3)) == (False, True)
    late = _play(task, [_wrong(sign)] * 3 + _solve(task))
    assert family.reward(late) == 0.0


def test_a_blank_or_malformed_turn_is_a_mistake():
    assert advance(DoorState(), "", "ab") == DoorState(0, 1)
    assert advance(DoorState(), "z", "ab") == DoorState(0, 1)
    assert advance(DoorState(), "a", "ab") == DoorState(1, 0)


@pytest.mark.parametrize(("doors", "spare", "e"), [(3, 0, 0.2), (16, 2, 0.1), (5, 3, 0.5)])
def test_the_success_probability_matches_the_recursion(doors, spare, e):
    """P(n, m) = (1 - e) P(n - 1, m) + e P(n, m - 1): one try, then the rest."""

    def p(n: int, m: int) -> float:
        if m < 0:
            return 0.0
        return 1.0 if n == 0 else (1 - e) * p(n - 1, m) + e * p(n, m - 1)

    assert success_probability(doors, spare, e) == pytest.approx(p(doors, spare))


def test_the_ground_truth_value_moves_only_with_doors_and_mistakes():
    family = DoorsFamily(error_rate=0.2)
    task = family.tasks("train", 1, seed=5)[0]
    signs = task.metadata["signs"]
    actions = [key_for(signs[0]), FILLER, _wrong(signs[1]), key_for(signs[1])]
    trajectory = _play(task, actions)
    adv = [family.advantage(trajectory, k) for k in range(4)]
    assert adv[0] > 0 and adv[1] == 0.0 and adv[2] < 0 and adv[3] > 0
    assert family.value(trajectory, 0) == pytest.approx(
        success_probability(len(signs), family.slack, 0.2))
    assert [family.subgoal(trajectory, k) for k in range(4)] == [1.0, 0.5, 0.0, 1.0]
    assert family.subgoal(trajectory, 4) is None
    done = _play(task, _solve(task))
    assert family.value(done, len(signs)) == 1.0


def test_hard_and_state_key_name_the_door_faced():
    family = DoorsFamily()
    task = next(t for t in family.tasks("train", 20, seed=0)
                if t.metadata["signs"][:2] == t.metadata["signs"][:2].lower()
                and t.metadata["signs"][2].isupper())
    signs = task.metadata["signs"]
    trajectory = _play(task, [key_for(signs[0]), FILLER, _wrong(signs[1]),
                              key_for(signs[1]), key_for(signs[2])])
    assert [family.hard(trajectory, k) for k in range(5)] == [False] * 4 + [True]
    assert [family.state_key(trajectory, k) for k in range(5)] == [
        "0/0", "1/0", "1/0", "1/1", "2/1"]

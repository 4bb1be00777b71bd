import asyncio

from tracerl.envs.calc import CalcFamily
from tracerl.policy.sampler import TransformersSampler
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.types import Status


class FlakyEnv:
    """Wraps the calc env; every third instance raises inside step."""

    count = 0

    def __init__(self) -> None:
        FlakyEnv.count += 1
        self.broken = FlakyEnv.count % 3 == 0
        self.inner = CalcFamily(calls=1).make_env()

    async def reset(self, task):
        return await self.inner.reset(task)

    async def step(self, action_text):
        if self.broken:
            raise ConnectionError("sandbox went away")
        return await self.inner.step(action_text)

    async def close(self):
        await self.inner.close()


def _runner(policy, env_factory, reward, **cfg):
    sampler = TransformersSampler(policy.model, policy.pad_id, seed=0, tokenizer=policy.tokenizer)
    return RolloutRunner(sampler, ChatRenderer(policy.tokenizer), policy.stop_ids, env_factory,
                         reward, RolloutConfig(max_turn_tokens=16, max_turns=2, **cfg))


def test_env_failure_is_contained_and_counted(tiny_policy):
    fam = CalcFamily(calls=1)
    runner = _runner(tiny_policy, FlakyEnv, fam.reward, group_size=3)
    groups = runner.run(fam.tasks("train", 3, 0))
    trajs = [t for g in groups for t in g.trajectories]
    errors = [t for t in trajs if t.status is Status.ERROR]
    assert len(errors) == 3 and runner.stats.env_errors == 3
    assert all(t.outcome_reward is None and "sandbox went away" in t.error for t in errors)
    assert all(t.outcome_reward is not None for t in trajs if t.status is not Status.ERROR)


def test_reward_failure_gives_none_not_zero(tiny_policy):
    fam = CalcFamily(calls=1)

    class Broken:
        name = "broken"

        def __call__(self, trajectory):
            raise TimeoutError("judge timed out")

    runner = _runner(tiny_policy, fam.make_env, Broken(), group_size=2)
    trajs = [t for g in runner.run(fam.tasks("train", 2, 0)) for t in g.trajectories]
    assert all(t.outcome_reward is None for t in trajs)
    assert runner.stats.reward_errors == 4 and runner.stats.unjudged == 4
    assert all("judge timed out" in t.error for t in trajs)


def test_groups_keep_their_task_and_size(tiny_policy):
    fam = CalcFamily(calls=1)
    tasks = fam.tasks("train", 3, 0)
    runner = _runner(tiny_policy, fam.make_env, fam.reward, group_size=4)
    groups = asyncio.run(runner.arun(tasks, policy_version=7))
    assert [g.task for g in groups] == tasks
    for i, g in enumerate(groups):
        assert [t.sample_index for t in g.trajectories] == [0, 1, 2, 3]
        assert all(t.group_index == i and t.policy_version == 7 for t in g.trajectories)


def test_a_call_may_change_group_size_and_temperature_without_touching_the_config(tiny_policy):
    fam = CalcFamily(calls=1)
    runner = _runner(tiny_policy, fam.make_env, fam.reward, group_size=3)
    before = runner.config
    groups = runner.run(fam.tasks("train", 2, seed=0), group_size=1, temperature=0.0)
    assert [len(g.trajectories) for g in groups] == [1, 1]
    assert runner.config is before and runner.config.group_size == 3
    assert [len(g.trajectories) for g in runner.run(fam.tasks("train", 1, seed=0))] == [3]


def test_the_transformers_sampler_is_a_sampler(tiny_policy):
    from tracerl.policy.sampling import Sampler

    assert isinstance(TransformersSampler(tiny_policy.model, tiny_policy.pad_id), Sampler)


class Counting:
    """A batch-capable reward that records how it was called."""

    name = "counting"

    def __init__(self, broken_batch: bool = False) -> None:
        self.batches: list[int] = []
        self.singles = 0
        self.broken_batch = broken_batch

    def __call__(self, trajectory):
        self.singles += 1
        if trajectory.sample_index == 1:
            raise ValueError("this one cannot be judged")
        return 0.5

    def batch(self, trajectories):
        self.batches.append(len(trajectories))
        if self.broken_batch:
            raise RuntimeError("checker went away")
        return [float(t.sample_index) for t in trajectories]


def test_a_reward_with_a_batch_method_is_called_once_per_rollout_batch(tiny_policy):
    fam = CalcFamily(calls=1)
    reward = Counting()
    runner = _runner(tiny_policy, fam.make_env, reward, group_size=3)
    trajs = [t for g in runner.run(fam.tasks("train", 2, 0)) for t in g.trajectories]
    assert reward.batches == [6] and reward.singles == 0
    assert [t.outcome_reward for t in trajs] == [0.0, 1.0, 2.0] * 2
    assert all(t.reward_parts["counting"] == t.outcome_reward for t in trajs)


def test_a_failing_batch_falls_back_to_one_by_one_and_contains_the_failure(tiny_policy):
    fam = CalcFamily(calls=1)
    reward = Counting(broken_batch=True)
    runner = _runner(tiny_policy, fam.make_env, reward, group_size=2)
    trajs = [t for g in runner.run(fam.tasks("train", 2, 0)) for t in g.trajectories]
    assert reward.batches == [4] and reward.singles == 4
    assert [t.outcome_reward for t in trajs] == [0.5, None] * 2
    assert runner.stats.reward_errors == 2 and runner.stats.unjudged == 2
    assert any("checker went away" in e for e in runner.stats.errors)


def test_the_sampler_keeps_contexts_between_turns_and_lets_go_after_the_batch(tiny_policy):
    """The prefix store serves the batch's later turns (episodes of two turns and more,
    one sample per task as in an evaluation) and is empty once the batch's episodes are
    over: its memory is the update's."""
    fam = CalcFamily(calls=2)
    runner = _runner(tiny_policy, fam.make_env, fam.reward, group_size=1)
    store = runner.sampler.prefix_store
    kept = []
    generate = runner.sampler.generate

    def spy(contexts, params, budgets=None):
        kept.append(len(store))
        return generate(contexts, params, budgets)

    runner.sampler.generate = spy
    groups = runner.run(fam.tasks("train", 4, seed=0))
    assert max(len(t.turns) for g in groups for t in g.trajectories) >= 2
    assert kept[0] == 0 and max(kept[1:]) > 0 and store.reused_tokens > 0
    assert len(store) == 0 and store.nbytes == 0

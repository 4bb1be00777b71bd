"""Nothing non-finite reaches an update (issue 32): a reward of 1e160, inf or NaN is a
data fault in every runtime (the sync trainer's step, the async loop, the Ray learner),
and a step whose loss or gradient is non-finite is skipped with the weights untouched.
Each runtime test poisons every reward of its first step, checks the weights did not
move, then checks that the clean steps after it still train (finite, changed weights)."""

import math
import random
from dataclasses import replace

import pytest
import torch

from tracerl.envs.tool_env import ToolEnv
from tracerl.train import configlib
from tracerl.train.batch import collate
from tracerl.train.config import TrainConfig
from tracerl.train.optim import adamw
from tracerl.train.ppo import ppo_update
from tracerl.train.rl_step import RLStep, trainable
from tracerl.train.runner import build_runner
from tracerl.train.step import rl_step, step_seed
from tracerl.types import Group, Message, Status, Task, Trajectory, Turn

POISON = (1e160, math.inf, math.nan)
TINY = ["stages=[rl]", "log.progress=false", "log.tensorboard=false", "trace.enabled=false",
        "rl.tasks_per_step=2", "rl.group_size=3", "rl.max_turns=1", "rl.max_turn_tokens=8",
        "rl.drop_uniform_groups=false", "rl.lr=1e-2"]


class PoisonReward:
    """Step 0's tasks (seed `step_seed(0, 0)`) get 1e160, inf and NaN in turn; later
    tasks the parity of the first action's length."""

    name = "poison"

    def __call__(self, t: Trajectory) -> float:
        if t.task.metadata.get("poison"):
            return POISON[t.sample_index % len(POISON)]
        return float(len(t.turns[0].info["content"]) % 2 == 0)


class PoisonFamily:
    name = "poison"
    reward = PoisonReward()

    def tasks(self, split: str, n: int, seed: int) -> list[Task]:
        poison = split == "train" and seed == step_seed(0, 0)
        return [Task(f"{split}-{seed}-{i}", (Message("user", f"Say {i}"),),
                     metadata={"poison": poison}) for i in range(n)]

    def make_env(self) -> ToolEnv:
        return ToolEnv([])

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        return [Message("assistant", "ab")]


def _weights(model) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def _finite(ws: list[torch.Tensor]) -> bool:
    return all(bool(torch.isfinite(w).all()) for w in ws)


def _config(*extra: str) -> TrainConfig:
    return configlib.load(TrainConfig, None, [*TINY, *extra])


def _traj(policy, reward: float | None, text: str = "ab") -> Trajectory:
    prompt = policy.tokenizer.encode("Say 1")
    ids = policy.tokenizer.encode(text)
    t = Trajectory(task=Task("t", (Message("user", "Say 1"),)), prompt_ids=prompt)
    t.turns.append(Turn(action_ids=ids, action_logprobs=[-1.0] * len(ids), action_text=text,
                        info={"content": text}))
    t.outcome_reward, t.status = reward, Status.DONE
    return t


def test_a_reward_that_is_no_sane_number_is_left_out_like_an_unjudged_one(tiny_policy):
    group = Group(task=Task("t", ()), trajectories=[
        _traj(tiny_policy, r) for r in (*POISON, -1e7, 1.0, 0.0, None)])
    keep, dropped = trainable([group], drop_uniform=False)
    assert [t.outcome_reward for t in keep] == [1.0, 0.0]
    assert dropped == 5


def test_a_step_with_non_finite_advantages_is_skipped_and_the_weights_stay(fresh_tiny_policy):
    policy = fresh_tiny_policy
    cfg = _config().rl
    batch = collate([_traj(policy, 1.0, "ab"), _traj(policy, 0.0, "abc")], policy.pad_id)
    batch.advantages = torch.where(batch.loss_mask > 0, torch.nan, 0.0)
    opt = adamw(policy.model.parameters(), cfg.lr)
    before = _weights(policy.model)
    metrics = ppo_update(policy.model, opt, batch, cfg, torch.Generator().manual_seed(0), 0)
    assert _same(before, _weights(policy.model))
    assert metrics.skipped_steps == 1 and not opt.state  # Adam's moments untouched too
    assert math.isfinite(metrics.loss)
    batch.advantages = torch.where(batch.loss_mask > 0, 1.0, 0.0)
    metrics = ppo_update(policy.model, opt, batch, cfg, torch.Generator().manual_seed(0), 0)
    assert metrics.skipped_steps == 0 and not _same(before, _weights(policy.model))


def test_the_rl_step_skips_an_update_whose_advantages_overflow(fresh_tiny_policy):
    """A poisoned reward that bypasses every entry check (set on the Trajectory after
    `trainable` let it through) still cannot reach the optimiser."""
    policy, config = fresh_tiny_policy, _config()
    learner = RLStep(policy, config, None, None)
    group = Group(task=Task("t", ()), trajectories=[_traj(policy, 1.0), _traj(policy, 0.0)])
    learner.method = _overflowing(learner.method)
    before = _weights(policy.model)
    out = learner.update([group], adamw(policy.model.parameters(), 1e-2), 0,
                         torch.Generator().manual_seed(0))
    assert out.update is None and out.skipped == "non-finite advantages"
    assert _same(before, _weights(policy.model))


def _overflowing(method):
    """The configured estimator, its advantages multiplied by inf (as float32 overflow
    of a 1e160 reward does)."""
    def fn(inp, rl):
        out = method.fn(inp, rl)
        return replace(out, advantages=out.advantages * math.inf)
    return replace(method, fn=fn)


@pytest.mark.slow
def test_the_sync_trainer_step_survives_1e160_inf_and_nan_rewards(fresh_tiny_policy):
    policy, config = fresh_tiny_policy, _config()
    start = _weights(policy.model)
    family = PoisonFamily()
    runner = build_runner(config, policy, family)
    learner = RLStep(policy, config, family, runner)
    opt = adamw(policy.model.parameters(), config.rl.lr)
    first = rl_step(learner, runner, family, opt, 0)
    assert _same(start, _weights(policy.model))
    record = first.metrics.record()
    assert record["unjudged"] == 6 and "loss" not in record
    assert all("not finite" in t.error or "exceeds" in t.error for t in first.trajectories)
    later = [rl_step(learner, runner, family, opt, i).metrics.record() for i in (1, 2)]
    end = _weights(policy.model)
    assert not _same(start, end) and _finite(end)
    assert all(r["unjudged"] == 0 and math.isfinite(r["loss"]) and r["skipped_steps"] == 0
               for r in later)


@pytest.mark.slow
def test_the_async_loop_survives_1e160_inf_and_nan_rewards(fresh_tiny_policy):
    from tracerl.train.async_loop import start_async

    policy = fresh_tiny_policy
    config = _config("rl.mode=async", "rl.tis_cap=2", "rl.max_staleness=4")
    family = PoisonFamily()
    learner = RLStep(policy, config, family, build_runner(config, policy, family))
    opt = adamw(policy.model.parameters(), config.rl.lr)
    start = _weights(policy.model)
    loop = start_async(learner, opt, family, config, None, rebuild_family=False)
    try:
        first = loop.step(0).metrics.record()
        assert _same(start, _weights(policy.model))
        assert first["unjudged"] == 6 and first["policy_version"] == 1.0
        later = [loop.step(i).metrics.record() for i in (1, 2)]
    finally:
        loop.close()
    end = _weights(policy.model)
    assert not _same(start, end) and _finite(end)
    assert all(math.isfinite(r["loss"]) and r["skipped_steps"] == 0 for r in later)


@pytest.mark.slow
def test_the_ray_learner_survives_1e160_inf_and_nan_rewards(fresh_tiny_policy):
    ray = pytest.importorskip("ray")
    from tracerl.train.ray_learner import RemoteLearner

    policy = fresh_tiny_policy
    config = _config("rl.mode=async", "runtime=ray", "ray.rollout_workers=1",
                     "ray.reward_workers=1", "rl.max_staleness=4")
    family = PoisonFamily()
    learner = RLStep(policy, config, family, None)
    opt = adamw(policy.model.parameters(), config.rl.lr)
    start = _weights(policy.model)
    remote = RemoteLearner(learner, opt, family, config, None, rebuild_family=False)
    try:
        first = remote.step(0).metrics.record()
        remote.pull()
        assert _same(start, _weights(policy.model))
        assert first["unjudged"] == 6
        later = [remote.step(i).metrics.record() for i in (1, 2)]
        remote.pull()
    finally:
        remote.close()
    assert not ray.is_initialized()
    end = _weights(policy.model)
    assert not _same(start, end) and _finite(end)
    assert all(math.isfinite(r["loss"]) and r["skipped_steps"] == 0 for r in later)

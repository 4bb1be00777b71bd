"""Each RL method learns a trivial task through the path `tracerl train` runs:
build_runner, RLStep and rl_step (collect groups, credit, update), nothing hand-rolled."""

import random

import pytest
import torch

from tracerl.envs.tool_env import ToolEnv
from tracerl.train.batch import collate
from tracerl.train.config import RLConfig, TrainConfig
from tracerl.train.rl_step import RLStep
from tracerl.train.runner import build_runner
from tracerl.train.step import rl_step
from tracerl.types import Message, Task, Trajectory

pytestmark = pytest.mark.slow


class DigitReward:
    """Fraction of the first action's characters that are digits (dense, trivial)."""

    name = "digits"

    def __call__(self, t: Trajectory) -> float:
        text = t.turns[0].info["content"]
        return sum(c.isdigit() for c in text) / max(1, len(text))


class DigitsFamily:
    """"Say a number": one turn, no tools, rewarded for digits."""

    name = "digits"
    reward = DigitReward()

    def tasks(self, split: str, n: int, seed: int) -> list[Task]:
        return [Task(f"{split}-{seed}-{i}", (Message("user", f"Say a number {i}"),))
                for i in range(n)]

    def make_env(self) -> ToolEnv:
        return ToolEnv([])

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        return [Message("assistant", str(rng.randrange(10**6)))]


def train(policy, rl: RLConfig, steps: int) -> tuple[list[float], RLStep]:
    torch.manual_seed(0)
    config = TrainConfig(rl=rl, stages=["rl"])
    family = DigitsFamily()
    runner = build_runner(config, policy, family)
    learner = RLStep(policy, config, family, runner)
    opt = torch.optim.AdamW(policy.model.parameters(), lr=rl.lr, weight_decay=0.0)
    history = [rl_step(learner, runner, family, opt, i).metrics.rollout.reward_mean
               for i in range(steps)]
    return history, learner


BASE = dict(lr=3e-3, tasks_per_step=8, max_turns=1, max_turn_tokens=8)


@pytest.mark.parametrize("rl", [
    RLConfig(**BASE, group_size=8),
    RLConfig(**BASE, group_size=8, advantage="rloo"),
    RLConfig(**BASE, group_size=8, policy_loss="gspo", clip_low=3e-4, clip_high=4e-4),
    RLConfig(**BASE, group_size=4, advantage="gae", critic_lr=3e-3, critic_warmup=2),
], ids=["grpo", "rloo", "gspo", "gae"])
def test_a_method_raises_the_reward_of_a_trivial_task(fresh_tiny_policy, rl):
    history, _ = train(fresh_tiny_policy, rl, steps=25)
    start, end = sum(history[:3]) / 3, sum(history[-3:]) / 3
    assert start < 0.3, history
    assert end > start + 0.3, history


def test_the_critic_learns_the_value_of_the_task(fresh_tiny_policy):
    """With gamma = lambda = 1 every action token's value target is the outcome, so the
    critic's mean value on fresh rollouts sits near the mean reward."""
    rl = RLConfig(**BASE, group_size=4, advantage="gae", critic_lr=3e-3, critic_warmup=2)
    _, learner = train(fresh_tiny_policy, rl, steps=20)
    policy = fresh_tiny_policy
    runner = build_runner(TrainConfig(rl=rl), policy, DigitsFamily())
    trajs = [t for g in runner.run(DigitsFamily().tasks("train", 8, 99)) for t in g.trajectories]
    batch = collate(trajs, policy.pad_id)
    assert learner.critic is not None
    with torch.no_grad():
        values = learner.critic(batch.input_ids, batch.attention_mask)
    mean_value = float((values * batch.loss_mask).sum() / batch.loss_mask.sum())
    mean_reward = sum(t.outcome_reward for t in trajs) / len(trajs)
    assert abs(mean_value - mean_reward) < 0.2, (mean_value, mean_reward)

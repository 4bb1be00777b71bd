"""GRPO learns a trivial task: the real runner, advantages and update, end to end."""

import torch

from tracerl.envs.tool_env import ToolEnv
from tracerl.policy.sampler import TransformersSampler
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.train.config import RLConfig
from tracerl.train.grpo import assign_advantages, trainable, update
from tracerl.types import Message, Task, Trajectory


class DigitReward:
    """Fraction of the first action's characters that are digits (dense, trivial)."""

    name = "digits"

    def __call__(self, t: Trajectory) -> float:
        text = t.turns[0].info["content"]
        return sum(c.isdigit() for c in text) / max(1, len(text))


def test_grpo_raises_the_reward_of_a_trivial_task(fresh_tiny_policy):
    torch.manual_seed(0)
    model = fresh_tiny_policy.model
    sampler = TransformersSampler(model, fresh_tiny_policy.pad_id, seed=0)
    policy = fresh_tiny_policy
    runner = RolloutRunner(sampler, ChatRenderer(policy.tokenizer), policy.stop_ids,
                           lambda: ToolEnv([]), DigitReward(),
                           RolloutConfig(group_size=8, max_turns=1, max_turn_tokens=8))
    cfg = RLConfig(lr=3e-3)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
    tasks = [Task(f"t{i}", (Message("user", f"Say a number {i}"),)) for i in range(8)]
    history = []
    for step in range(25):
        groups = runner.run(tasks)
        history.append(sum(t.outcome_reward for g in groups for t in g.trajectories) / 64)
        assign_advantages(groups, std_normalize=True)
        keep, dropped = trainable(groups, drop_uniform=True)
        update(model, None, opt, keep, fresh_tiny_policy.pad_id, cfg, dropped,
               torch.Generator().manual_seed(step))
    start, end = sum(history[:3]) / 3, sum(history[-3:]) / 3
    assert start < 0.3
    assert end > start + 0.3, history

"""PPO with a critic, and DPO, learn trivial tasks with the real runner and update."""

import json

import pytest
import torch
from test_learns import DigitReward

from tracerl.envs.tool_env import ToolEnv
from tracerl.policy.model import STOP_TOKENS
from tracerl.policy.sampler import TransformersSampler
from tracerl.rollout.demos import trajectory_from_messages
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.train.batch import collate
from tracerl.train.config import DPOConfig, RLConfig, TrainConfig
from tracerl.train.dpo import pairs_from_jsonl, sequence_logp, train_dpo
from tracerl.train.rl_step import RLStep
from tracerl.types import Message, Task, ToolCall


def test_ppo_with_a_critic_raises_the_reward_of_a_trivial_task(fresh_tiny_policy):
    torch.manual_seed(0)
    policy = fresh_tiny_policy
    runner = RolloutRunner(TransformersSampler(policy.model, policy.pad_id, seed=0),
                           ChatRenderer(policy.tokenizer), policy.stop_ids,
                           lambda: ToolEnv([]), DigitReward(),
                           RolloutConfig(group_size=4, max_turns=1, max_turn_tokens=8))
    cfg = TrainConfig(rl=RLConfig(lr=3e-3, advantage="gae", critic_lr=3e-3, critic_warmup=2))
    step = RLStep(policy, cfg, None, runner)
    opt = torch.optim.AdamW(policy.model.parameters(), lr=cfg.rl.lr)
    tasks = [Task(f"t{i}", (Message("user", f"Say a number {i}"),)) for i in range(8)]
    history = []
    for i in range(20):
        groups = runner.run(tasks)
        history.append(sum(t.outcome_reward for g in groups for t in g.trajectories) / 32)
        step.update(groups, opt, i, torch.Generator().manual_seed(i))
    start, end = sum(history[:3]) / 3, sum(history[-3:]) / 3
    assert end > start + 0.3, history
    # with gamma = lambda = 1 every action token's value target is the outcome, so the
    # critic's mean value on fresh rollouts should sit near the mean reward
    trajs = [t for g in runner.run(tasks) for t in g.trajectories]
    batch = collate(trajs, policy.pad_id)
    with torch.no_grad():
        values = step.critic(batch.input_ids, batch.attention_mask)
    mean_value = float((values * batch.loss_mask).sum() / batch.loss_mask.sum())
    mean_reward = sum(t.outcome_reward for t in trajs) / len(trajs)
    assert abs(mean_value - mean_reward) < 0.2, (mean_value, mean_reward)


def _pairs_file(tmp_path, n):
    lines = []
    for i in range(n):
        prompt = [{"role": "user", "content": f"Say a number {i}"}]
        lines.append(json.dumps({"prompt": prompt,
                                 "chosen": [{"role": "assistant", "content": f"{i * 7919}"}],
                                 "rejected": [{"role": "assistant", "content": "abcd"}]}))
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines))
    return path


def _margin(policy, pairs):
    with torch.no_grad():
        chosen = sequence_logp(policy.model, [c for c, _ in pairs], policy.pad_id)
        rejected = sequence_logp(policy.model, [r for _, r in pairs], policy.pad_id)
    return float((chosen - rejected).mean())


def test_dpo_prefers_the_chosen_answers(fresh_tiny_policy, tmp_path):
    policy = fresh_tiny_policy
    renderer = ChatRenderer(policy.tokenizer)
    pairs = pairs_from_jsonl(_pairs_file(tmp_path, 32), renderer)
    train, heldout = pairs[:24], pairs[24:]
    before = _margin(policy, heldout)
    history = train_dpo(policy, train, DPOConfig(lr=3e-3, epochs=2, batch_size=8, beta=0.5),
                        seed=0)
    assert _margin(policy, heldout) > before + 5.0
    assert history[-1]["reward_accuracy"] == 1.0


def test_dpo_likelihood_ignores_observation_tokens(tiny_policy):
    renderer = ChatRenderer(tiny_policy.tokenizer)
    task = Task("t", (Message("user", "hi"),))
    call = ToolCall("f", {}, id="c0")
    action = Message("assistant", '<tool_call>{"name": "f"}</tool_call>', tool_calls=(call,))
    a, b = (trajectory_from_messages(renderer, task, list(task.messages),
                                     [action, Message("tool", text, tool_call_id="c0")],
                                     STOP_TOKENS) for text in ("short", "a much longer result"))
    logp = sequence_logp(tiny_policy.model, [a, b], tiny_policy.pad_id)
    assert torch.allclose(logp[0], logp[1])


def test_a_bad_pairs_file_names_the_line(tmp_path, tiny_policy):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"chosen": [{"role": "assistant", "content": "x"}]}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1"):
        pairs_from_jsonl(path, ChatRenderer(tiny_policy.tokenizer))

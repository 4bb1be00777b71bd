"""DPO on multi-turn trajectories (Rafailov et al. 2023), as a stage between SFT and RL.

A preference pair is two trajectories for the same prompt. Their log-likelihoods are
summed over action tokens only: observation tokens (tool results, template text) are
the env's, not the policy's, so the loss mask of the TokenBatch is respected exactly as
in SFT and RL. The reference is the policy at the start of the stage: a frozen copy, or
with LoRA the policy with its adapter disabled (tracerl.train.reference).

Pairs come from either
- rollouts: sample `dpo.group_size` trajectories per train task and pair the best with
  the worst when their rewards differ (unjudged samples never enter a pair), or
- a JSONL file, one object per line: {"prompt": [...]?, "chosen": [...], "rejected":
  [...]} with OpenAI-format messages; without "prompt", the messages before the first
  assistant message of "chosen" are the prompt and must open "rejected" too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import torch

from tracerl.algorithms.losses import dpo_loss
from tracerl.envs.family import TaskFamily
from tracerl.policy.lora import trainable_parameters
from tracerl.policy.model import Policy
from tracerl.rollout.demos import trajectory_from_messages
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutRunner
from tracerl.train.batch import batch_logprobs, collate
from tracerl.train.config import DPOConfig, TrainConfig
from tracerl.train.micro import pack
from tracerl.train.optim import adamw
from tracerl.train.reference import Reference
from tracerl.types import Group, Message, Task, Trajectory
from tracerl.util.jsonl import json_lines

Pair = tuple[Trajectory, Trajectory]


def pairs_from_groups(groups: Sequence[Group]) -> list[Pair]:
    """(best, worst) per group whose judged rewards differ."""
    pairs = []
    for g in groups:
        judged = [t for t in g.trajectories
                  if t.outcome_reward is not None and t.num_action_tokens > 0]
        if len(judged) < 2:
            continue
        best = max(judged, key=lambda t: t.outcome_reward or 0.0)
        worst = min(judged, key=lambda t: t.outcome_reward or 0.0)
        if (best.outcome_reward or 0.0) > (worst.outcome_reward or 0.0):
            pairs.append((best, worst))
    return pairs


def _messages(where: str, raw: object) -> list[Message]:
    if not isinstance(raw, list) or not raw:
        raise ValueError(f"{where}: expected a non-empty list of messages")
    try:
        return [Message.from_openai(m) for m in raw]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{where}: {e}") from e


def _split(where: str, prompt: list[Message], conversation: list[Message]) -> list[Message]:
    if conversation[: len(prompt)] != prompt:
        raise ValueError(f"{where}: does not start with the prompt messages")
    rest = conversation[len(prompt):]
    if not rest or rest[0].role != "assistant":
        raise ValueError(f"{where}: needs an assistant message right after the prompt")
    return rest


def _trajectory(where: str, renderer: ChatRenderer, task: Task, prompt: list[Message],
                conversation: list[Message]) -> Trajectory:
    rest = _split(where, prompt, conversation)
    try:
        return trajectory_from_messages(renderer, task, prompt, rest)
    except ValueError as e:  # e.g. an action that goes on past a stop string
        raise ValueError(f"{where}: {e}") from e


def pairs_from_jsonl(path: str | Path, renderer: ChatRenderer) -> list[Pair]:
    """Preference pairs from a JSONL file (format in the module docstring)."""
    pairs = []
    for where, row in json_lines(path):
        if not isinstance(row, dict) or "chosen" not in row or "rejected" not in row:
            raise ValueError(f"{where}: expected an object with 'chosen' and 'rejected'")
        chosen = _messages(f"{where} chosen", row["chosen"])
        rejected = _messages(f"{where} rejected", row["rejected"])
        if "prompt" in row:
            prompt = _messages(f"{where} prompt", row["prompt"])
            chosen, rejected = prompt + chosen, prompt + rejected
        else:
            first = next((i for i, m in enumerate(chosen) if m.role == "assistant"), 0)
            prompt = chosen[:first]
        if not prompt:
            raise ValueError(f"{where}: no prompt messages before the first assistant message")
        task = Task(id=f"pref-{where}", messages=tuple(prompt))
        pairs.append((_trajectory(f"{where} chosen", renderer, task, prompt, chosen),
                      _trajectory(f"{where} rejected", renderer, task, prompt, rejected)))
    if not pairs:
        raise ValueError(f"{path}: no preference pairs")
    return pairs


def sequence_logp(model: torch.nn.Module, trajectories: Sequence[Trajectory],
                  pad_id: int, ref: Reference | None = None) -> torch.Tensor:
    """(B,) sum of log-probabilities over each trajectory's action tokens: under `model`,
    or under the reference `ref` when given."""
    device = next(model.parameters()).device
    batch = collate(trajectories, pad_id).to(device)
    if ref is None:
        logp = batch_logprobs(model, batch)  # (B, L-1), 0 off the loss mask
    else:
        logp = ref.batch_logprobs(batch)  # (B, L-1)
    return (logp * batch.loss_mask).sum(-1)  # (B,)


def train_dpo(policy: Policy, pairs: list[Pair], cfg: DPOConfig, seed: int,
              on_step: Callable[[int, dict[str, float]], None] | None = None,
              micro_tokens: int = 0) -> list[dict[str, float]]:
    """DPO against the policy as it is now (the reference); returns per-step metrics.
    Each step's gradient is accumulated over pieces of its pairs of at most about
    `micro_tokens` positions (0: all pairs at once)."""
    if not pairs:
        raise ValueError("DPO needs at least one preference pair")
    model = policy.model
    ref = Reference.of(model)
    opt = adamw(trainable_parameters(model), cfg.lr)
    rng = random.Random(seed)
    history: list[dict[str, float]] = []
    model.train()
    for _ in range(cfg.epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        for b in range(0, len(order), cfg.batch_size):
            chunk = [pairs[i] for i in order[b:b + cfg.batch_size]]
            opt.zero_grad(set_to_none=True)
            sums = dict.fromkeys(("loss", "reward_accuracy", "margin"), 0.0)
            costs = [len(c.token_ids()) + len(r.token_ids()) for c, r in chunk]
            for piece in pack(costs, micro_tokens) if micro_tokens else [range(len(chunk))]:
                part = [chunk[i] for i in piece]
                both = [c for c, _ in part] + [r for _, r in part]
                ref_logp = sequence_logp(model, both, policy.pad_id, ref)  # (2p,)
                logp = sequence_logp(model, both, policy.pad_id)  # (2p,)
                p = len(part)
                loss, stats = dpo_loss(logp[:p], logp[p:], ref_logp[:p], ref_logp[p:],
                                       cfg.beta)
                share = p / len(chunk)  # the loss is a mean over pairs
                (loss * share).backward()
                for key, value in {"loss": loss.item(), **asdict(stats)}.items():
                    sums[key] += share * value
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            history.append(sums)
            if on_step:
                on_step(len(history), history[-1])
    return history


def run_dpo_stage(policy: Policy, config: TrainConfig, family: TaskFamily,
                  runner: RolloutRunner, renderer: ChatRenderer,
                  on_step: Callable[[int, dict[str, float]], None] | None = None
                  ) -> list[dict[str, float]]:
    """The `dpo` stage: collect pairs (rollouts or JSONL), then train."""
    cfg = config.dpo
    if cfg.pairs_from == "rollouts":
        groups = runner.run(family.tasks("train", cfg.tasks, seed=config.seed + 20_000),
                            group_size=cfg.group_size)
        pairs = pairs_from_groups(groups)
        if not pairs:
            raise ValueError(f"dpo: no task among {cfg.tasks} gave samples with different "
                             "rewards; raise dpo.tasks or dpo.group_size")
    else:
        pairs = pairs_from_jsonl(cfg.pairs_from, renderer)
    return train_dpo(policy, pairs, cfg, config.seed, on_step, config.micro_batch_tokens)

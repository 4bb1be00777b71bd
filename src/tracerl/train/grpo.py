"""One GRPO step: rollouts -> group advantages -> clipped policy-gradient update.

Departures from the paper (Shao et al. 2024), and why:
- one update per rollout batch by default (on-policy; the ratio only matters with
  `update_epochs` / `minibatches` > 1), clip-higher and token-mean from DAPO;
- the KL term is off by default (`kl_coef=0`), as in DAPO and Dr.GRPO: with a verifiable
  reward the reference anchor mostly slows learning;
- samples whose reward could not be judged (None) or whose rollout failed are dropped
  from the update and counted, never scored 0.
"""

from __future__ import annotations

import math

import torch
from transformers import PreTrainedModel

from tracerl.algorithms.advantages import grpo_advantages
from tracerl.train.batch import TokenBatch, collate, token_logprobs
from tracerl.train.config import RLConfig
from tracerl.train.ppo import PPOMetrics, ppo_update
from tracerl.types import Group, Status, Trajectory

UpdateMetrics = PPOMetrics


def assign_advantages(groups: list[Group], std_normalize: bool) -> None:
    """Write per-token advantages (trajectory-level credit) into every trajectory."""
    if not groups:
        return
    width = max(len(g.trajectories) for g in groups)
    rewards = torch.full((len(groups), width), math.nan)  # (N, G)
    for i, g in enumerate(groups):
        for j, t in enumerate(g.trajectories):
            if t.outcome_reward is not None and t.status is not Status.ERROR:
                rewards[i, j] = t.outcome_reward
    adv = grpo_advantages(rewards, std_normalize=std_normalize)  # (N, G)
    for i, g in enumerate(groups):
        for j, t in enumerate(g.trajectories):
            a = float(adv[i, j])
            t.advantages = [a * m for m in t.loss_mask()]


def _judged(t: Trajectory) -> bool:
    return t.outcome_reward is not None and t.status is not Status.ERROR


def trainable(groups: list[Group], drop_uniform: bool) -> tuple[list[Trajectory], int]:
    """Trajectories that enter the loss, and how many were left out.

    Left out: unjudged or failed samples (never scored 0), and with `drop_uniform`
    whole groups whose judged rewards are all equal (zero advantage everywhere).
    """
    keep = []
    for g in groups:
        judged = [t for t in g.trajectories if _judged(t) and t.num_action_tokens > 0]
        if drop_uniform and len({t.outcome_reward for t in judged}) <= 1:
            continue
        keep += judged
    return keep, sum(len(g.trajectories) for g in groups) - len(keep)


def update(model: PreTrainedModel, ref_model: PreTrainedModel | None,
           optimizer: torch.optim.Optimizer, trajectories: list[Trajectory], pad_id: int,
           cfg: RLConfig, dropped: int, generator: torch.Generator) -> UpdateMetrics:
    """Policy-gradient update(s) on one rollout batch (advantages already assigned)."""
    device = next(model.parameters()).device
    batch = collate(trajectories, pad_id).to(device)
    ref_logp = _reference_logp(ref_model, batch, cfg) if cfg.kl_coef > 0 else None
    return ppo_update(model, optimizer, batch, cfg, generator, dropped, ref_logp)


@torch.no_grad()
def _reference_logp(ref_model: PreTrainedModel | None, batch: TokenBatch,
                    cfg: RLConfig) -> torch.Tensor:
    if ref_model is None:
        raise ValueError("rl.kl_coef > 0 needs a reference model")
    ref_model.eval()
    return token_logprobs(ref_model, batch.input_ids, batch.attention_mask, cfg.temperature)

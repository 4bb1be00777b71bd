"""Advantage estimators adapted to the RL step's batch (the table is tracerl.train.methods).

Each function maps a CreditInputs (the kept trajectories as a TokenBatch plus rewards,
group ids, turn structure, critic values and an optional in-reward KL penalty) to
token advantages (B, T), and for critic-based estimators the value targets. The math
lives in tracerl.algorithms; this module only reshapes batch tensors for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from tracerl.algorithms.advantages import (
    broadcast_to_tokens,
    grpo_advantages,
    outcome_token_rewards,
    reinforce_pp_advantages,
    rloo_advantages,
)
from tracerl.algorithms.gae import bilevel_gae_advantages, gae_advantages
from tracerl.algorithms.kl import kl_in_reward
from tracerl.algorithms.turn_credit import (
    discounted_turn_returns,
    gigpo_advantages,
    mt_grpo_advantages,
)
from tracerl.credit.turns import per_turn_to_tokens, turn_end_mask
from tracerl.train.batch import TokenBatch

if TYPE_CHECKING:  # the config reads the method table, which reads this module
    from tracerl.train.rl_config import RLConfig


@dataclass(frozen=True)
class CreditInputs:
    batch: TokenBatch
    """The kept trajectories, collated; masks are (B, T)."""
    rewards: torch.Tensor
    """(B,) training rewards (outcome plus shaping)."""
    group_ids: torch.Tensor
    """(B,) long: which task group each trajectory belongs to."""
    turn_index: torch.Tensor
    """(B, T) long: turn of each action token, -1 elsewhere."""
    turn_rewards: torch.Tensor | None = None
    """(B, K) trusted step-evaluator scores (NaN = none), or None: no turn-level signal."""
    anchors: torch.Tensor | None = None
    """(B, K) long anchor-state ids for gigpo (-1 = no turn)."""
    values: torch.Tensor | None = None
    """(B, T) critic values at rollout time (gae, turn_gae)."""
    kl: torch.Tensor | None = None
    """(B, T) per-token KL to the reference, to be charged in the reward (kl_placement=reward)
    at rl.kl_coef; None: no KL in the reward."""


@dataclass(frozen=True)
class CreditOutput:
    advantages: torch.Tensor
    """(B, T) token advantages, 0 off the loss mask."""
    returns: torch.Tensor | None = None
    """(B, T) value targets for the critic."""


Estimator = Callable[[CreditInputs, "RLConfig"], CreditOutput]


def _grouped(x: torch.Tensor, group_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, ...) -> (N, G, ...) NaN-padded, plus each row's column in its group."""
    groups = group_ids.unique(sorted=True)
    row = torch.searchsorted(groups, group_ids)  # (B,)
    col = torch.zeros_like(group_ids)
    for g in range(len(groups)):
        members = (row == g).nonzero().squeeze(-1)
        col[members] = torch.arange(len(members))
    width = int(col.max()) + 1 if len(col) else 1
    out = torch.full((len(groups), width, *x.shape[1:]), float("nan"), dtype=x.dtype)
    out[row, col] = x
    return out, torch.stack([row, col])


def _seq_rewards(inp: CreditInputs, cfg: RLConfig) -> torch.Tensor:
    """(B,) rewards with an in-reward KL penalty summed over each sequence."""
    if inp.kl is None:
        return inp.rewards
    penalties = kl_in_reward(torch.zeros_like(inp.kl), inp.kl, cfg.kl_coef, inp.batch.loss_mask)
    return inp.rewards + penalties.sum(-1)


def _token_rewards(inp: CreditInputs, outcomes: torch.Tensor, cfg: RLConfig) -> torch.Tensor:
    rewards = outcome_token_rewards(outcomes, inp.batch.loss_mask)  # (B, T)
    if inp.kl is not None:
        rewards = kl_in_reward(rewards, inp.kl, cfg.kl_coef, inp.batch.loss_mask)
    return rewards


def _group_estimator(fn: Callable[[torch.Tensor], torch.Tensor]) -> Estimator:
    def estimate(inp: CreditInputs, cfg: RLConfig) -> CreditOutput:
        grouped, (row, col) = _grouped(_seq_rewards(inp, cfg), inp.group_ids)  # (N, G)
        adv = fn(grouped)[row, col]  # (B,)
        return CreditOutput(broadcast_to_tokens(adv, inp.batch.loss_mask))
    return estimate


grpo = _group_estimator(lambda r: grpo_advantages(r, std_normalize=True))
"""GRPO: (r - group mean) / group std (Shao et al. 2024)."""
dr_grpo = _group_estimator(lambda r: grpo_advantages(r, std_normalize=False))
"""Dr.GRPO: r - group mean, no std normalisation (Liu et al. 2025)."""
rloo = _group_estimator(rloo_advantages)
"""RLOO: r minus the mean of the other samples of the group (Ahmadian et al. 2024)."""


def _reinforce_pp(baseline: bool) -> Estimator:
    def estimate(inp: CreditInputs, cfg: RLConfig) -> CreditOutput:
        outcomes = inp.rewards
        if baseline:  # REINFORCE++-baseline: subtract the group mean first
            grouped, (row, col) = _grouped(outcomes, inp.group_ids)
            outcomes = grpo_advantages(grouped, std_normalize=False)[row, col]
        adv = reinforce_pp_advantages(_token_rewards(inp, outcomes, cfg), inp.batch.loss_mask,
                                      cfg.gamma)
        return CreditOutput(adv)
    return estimate


def _need_values(inp: CreditInputs) -> torch.Tensor:
    if inp.values is None:
        raise ValueError("this advantage estimator needs critic values")
    return inp.values


reinforce_pp = _reinforce_pp(baseline=False)
"""REINFORCE++: batch-normalised discounted returns (Hu 2025)."""
reinforce_pp_baseline = _reinforce_pp(baseline=True)
"""REINFORCE++-baseline: the group mean subtracted first."""


def gae(inp: CreditInputs, cfg: RLConfig) -> CreditOutput:
    adv, ret = gae_advantages(_token_rewards(inp, inp.rewards, cfg), _need_values(inp),
                              inp.batch.loss_mask, cfg.gamma, cfg.lam)
    return CreditOutput(adv, ret)


def turn_gae(inp: CreditInputs, cfg: RLConfig) -> CreditOutput:
    """Bi-level GAE: turn rewards (evaluator score - 0.5, so a neutral turn earns 0) at
    each turn's last token, the outcome added at the final one."""
    ends = turn_end_mask(inp.turn_index)  # (B, T)
    rewards = _token_rewards(inp, inp.rewards, cfg)  # (B, T) outcome on the last action token
    if inp.turn_rewards is not None:
        shaped = per_turn_to_tokens(inp.turn_rewards - 0.5, inp.turn_index)  # (B, T)
        rewards = rewards + shaped * ends
    adv, ret = bilevel_gae_advantages(rewards, _need_values(inp), inp.batch.loss_mask, ends,
                                      cfg.gamma, cfg.lam)
    return CreditOutput(adv, ret)


def _turn_shape(inp: CreditInputs) -> int:
    return int(inp.turn_index.max()) + 1


def mt_grpo(inp: CreditInputs, cfg: RLConfig) -> CreditOutput:
    k = _turn_shape(inp)
    tr = (inp.turn_rewards[:, :k] if inp.turn_rewards is not None
          else torch.full((len(inp.rewards), k), float("nan")))
    outcomes, (row, col) = _grouped(_seq_rewards(inp, cfg), inp.group_ids)  # (N, G)
    turns, _ = _grouped(tr, inp.group_ids)  # (N, G, K)
    per_turn = mt_grpo_advantages(outcomes, turns, cfg.turn_weight, std_normalize=True)
    return CreditOutput(per_turn_to_tokens(per_turn[row, col], inp.turn_index)
                        * inp.batch.loss_mask)


def gigpo(inp: CreditInputs, cfg: RLConfig) -> CreditOutput:
    """GiGPO with the outcome as the only (sparse) reward: a step's return is
    gamma^(steps to the end) * outcome (plus trusted turn rewards, if any)."""
    if inp.anchors is None:
        raise ValueError("gigpo needs anchor states")
    k = _turn_shape(inp)
    anchors = inp.anchors[:, :k]
    exists = anchors >= 0  # (B, K)
    last = exists.long().cumsum(1).argmax(1)  # (B,) last existing turn
    step_rewards = torch.where(exists, torch.zeros(anchors.shape), torch.tensor(float("nan")))
    step_rewards[torch.arange(len(last)), last] = _seq_rewards(inp, cfg)
    if inp.turn_rewards is not None:
        step_rewards = step_rewards + torch.nan_to_num(inp.turn_rewards[:, :k] - 0.5)
    returns = discounted_turn_returns(step_rewards, cfg.gamma)  # (B, K)
    outcomes, (row, col) = _grouped(_seq_rewards(inp, cfg), inp.group_ids)
    grouped_returns, _ = _grouped(returns, inp.group_ids)  # (N, G, K)
    grouped_anchors, _ = _grouped(anchors.to(torch.float32), inp.group_ids)
    grouped_anchors = torch.nan_to_num(grouped_anchors, nan=-1.0).long()
    per_turn = gigpo_advantages(outcomes, grouped_returns, grouped_anchors, cfg.turn_weight,
                                std_normalize=True)
    return CreditOutput(per_turn_to_tokens(per_turn[row, col], inp.turn_index)
                        * inp.batch.loss_mask)

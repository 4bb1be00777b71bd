"""The one table of RL methods: each advantage estimator and each policy loss is a record.

A record holds the pure function and what the method needs from the rest of the RL
step (a critic, step-evaluator turn rewards, anchor states, a group baseline, a
reference model). The RL step reads these flags; nothing else branches on a method's
name. Adding a method adds a function (in tracerl.algorithms, adapted to the batch in
tracerl.train.estimators) and one record here; the config's accepted names live in
tracerl.algorithms.names and a test keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import torch

from tracerl.algorithms.losses import (
    PolicyLossStats,
    cispo_policy_loss,
    clipped_policy_loss,
    gspo_policy_loss,
    sequence_truncated_is_weights,
    truncated_is_weights,
)
from tracerl.train import estimators as est
from tracerl.train.configlib import ConfigError

if TYPE_CHECKING:
    from tracerl.train.rl_config import RLConfig

PolicyLossFn = Callable[..., tuple[torch.Tensor, PolicyLossStats]]


@dataclass(frozen=True)
class EstimatorSpec:
    fn: est.Estimator
    """(CreditInputs, RLConfig) -> token advantages (and value targets for a critic)."""
    group_baseline: bool = False
    """Advantages are relative to the task's group: a group of equal rewards carries no
    signal, so `rl.drop_uniform_groups` may leave it out."""
    critic: bool = False
    """Needs a value model trained beside the policy (PPO with GAE)."""
    turn_rewards: bool = False
    """Reads per-turn scores from the step evaluator (`credit.evaluator`)."""
    needs_evaluator: bool = False
    """Meaningless without a step evaluator (turn rewards are its whole point)."""
    anchors: bool = False
    """Needs anchor-state ids: turns that reach the same env state across a group."""
    reference: bool = False
    """Needs the reference model whatever `rl.kl_coef` says."""


@dataclass(frozen=True)
class PolicyLossSpec:
    fn: PolicyLossFn
    """(logp, old_logp, advantages, mask, clip_low=, clip_high=, agg=, weights=) -> loss."""
    dual_clip: bool = False
    """Accepts `rl.dual_clip`."""
    reference: bool = False
    """Needs the reference model whatever `rl.kl_coef` says."""


ESTIMATORS: dict[str, EstimatorSpec] = {
    "grpo": EstimatorSpec(est.grpo, group_baseline=True),
    "dr_grpo": EstimatorSpec(est.dr_grpo, group_baseline=True),
    "rloo": EstimatorSpec(est.rloo, group_baseline=True),
    "reinforce_pp": EstimatorSpec(est.reinforce_pp),
    "reinforce_pp_baseline": EstimatorSpec(est.reinforce_pp_baseline),
    "gae": EstimatorSpec(est.gae, critic=True),
    "turn_gae": EstimatorSpec(est.turn_gae, critic=True, turn_rewards=True),
    "mt_grpo": EstimatorSpec(est.mt_grpo, turn_rewards=True, needs_evaluator=True),
    "gigpo": EstimatorSpec(est.gigpo, turn_rewards=True, anchors=True),
}

POLICY_LOSSES: dict[str, PolicyLossSpec] = {
    "ppo": PolicyLossSpec(clipped_policy_loss, dual_clip=True),
    "gspo": PolicyLossSpec(gspo_policy_loss),
    "cispo": PolicyLossSpec(cispo_policy_loss),
}


ISWeightsFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, float], torch.Tensor]


def _token_is(train_logp: torch.Tensor, behaviour_logp: torch.Tensor, mask: torch.Tensor,
              cap: float) -> torch.Tensor:
    return truncated_is_weights(train_logp, behaviour_logp, cap)


IS_LEVELS: dict[str, ISWeightsFn] = {
    "token": _token_is,
    "sequence": sequence_truncated_is_weights,
}
"""Truncated importance sampling by `rl.tis_level`: (train_logp, behaviour_logp, mask,
cap) -> (B, T) weights; the correction for a stale (async) or mismatched sampler."""


def estimator(cfg: RLConfig) -> EstimatorSpec:
    return ESTIMATORS[cfg.advantage]


def policy_loss(cfg: RLConfig) -> PolicyLossFn:
    """The configured loss, with `rl.dual_clip` bound where the loss takes it."""
    spec = POLICY_LOSSES[cfg.policy_loss]
    if spec.dual_clip and cfg.dual_clip is not None:
        return partial(spec.fn, dual_clip=cfg.dual_clip)
    return spec.fn


def is_weights(cfg: RLConfig) -> ISWeightsFn:
    """The configured truncated-IS weights (use only when `rl.tis_cap` > 0)."""
    return IS_LEVELS[cfg.tis_level]


def needs_reference(cfg: RLConfig) -> bool:
    """A frozen reference model: for the KL term, or because a method reads it."""
    return cfg.kl_coef > 0 or estimator(cfg).reference or POLICY_LOSSES[cfg.policy_loss].reference


def check_methods(rl: RLConfig, evaluator: str) -> None:
    """Combinations the table rules out, as ConfigErrors naming the keys (`evaluator`:
    `credit.evaluator`)."""
    spec = ESTIMATORS[rl.advantage]
    if spec.needs_evaluator and evaluator == "none":
        raise ConfigError(f"rl.advantage={rl.advantage} needs a step evaluator: "
                          "set credit.evaluator")
    if rl.dual_clip is not None and not POLICY_LOSSES[rl.policy_loss].dual_clip:
        takes = [n for n, s in POLICY_LOSSES.items() if s.dual_clip]
        raise ConfigError(f"rl.dual_clip is not used by rl.policy_loss={rl.policy_loss}; "
                          f"it needs one of {takes}")
    if rl.critic_warmup and not spec.critic:
        raise ConfigError(f"rl.critic_warmup needs an estimator with a critic "
                          f"({[n for n, s in ESTIMATORS.items() if s.critic]})")

"""The `rl` section of the config: the rollout settings plus the update's.

A module of its own, below train/config.py, so that the method table
(train/methods.py) and the advantage estimators (train/estimators.py), which read these
fields, need not import the whole config, which validates the methods against them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tracerl.algorithms.names import Advantage, ISLevel, KLEstimator, LossAgg, PolicyLoss
from tracerl.rollout.config import RolloutConfig


@dataclass(frozen=True)
class RLConfig(RolloutConfig):
    """The `rl` section: the rollout settings (inherited) plus the update's."""

    steps: int = 100
    """RL steps (one rollout batch and one update each)."""
    tasks_per_step: int = 8
    """Tasks per step; each gets group_size samples."""
    lr: float = 1e-4
    """Learning rate (AdamW, constant; 3e-4 corrupts the tiny policy's tool-call syntax)."""
    clip_low: float = 0.2
    """Lower PPO clip range (ratio >= 1 - clip_low)."""
    clip_high: float = 0.28
    """Upper PPO clip range (DAPO clip-higher)."""
    loss_agg: LossAgg = "token-mean"
    """Loss aggregation: token-mean, seq-mean-token-mean or seq-mean-token-sum."""
    drop_uniform_groups: bool = True
    """Leave groups whose rewards are all equal out of the update (no signal; saves time)."""
    kl_coef: float = 0.0
    """Weight of the KL-to-reference term in the loss (0 disables the reference model)."""
    kl_estimator: KLEstimator = "k3"
    """KL estimator: k1, k2 or k3."""
    update_epochs: int = 1
    """Passes over each rollout batch."""
    minibatches: int = 1
    """Optimiser steps per pass (the batch is split)."""
    grad_clip: float = 1.0
    """Max global gradient norm."""
    advantage: Advantage = "grpo"
    """Advantage estimator: grpo, dr_grpo (no std normalisation), rloo, reinforce_pp,
    reinforce_pp_baseline, gae (critic), turn_gae (bi-level GAE with step-evaluator turn
    rewards), mt_grpo or gigpo (turn-level credit in group advantages)."""
    policy_loss: PolicyLoss = "ppo"
    """Policy loss: ppo (clipped), gspo (sequence ratio; use clip ~3e-4/4e-4) or cispo."""
    dual_clip: float | None = None
    """ppo dual-clip constant c > 1 bounding negative-advantage losses (null = off)."""
    tis_cap: float = 0.0
    """Truncated importance sampling cap for sampler/trainer mismatch and, in async runs,
    staleness (0 = off; e.g. 2)."""
    tis_level: ISLevel = "token"
    """Truncated IS per token, or per sequence (one weight per trajectory: the product of
    its token ratios, capped)."""
    kl_placement: Literal["loss", "reward"] = "loss"
    """Where kl_coef applies: a loss term, or a per-token penalty in the reward."""
    overlong_max: int = 0
    """DAPO overlong shaping: response length where the penalty reaches -1 (0 = off)."""
    overlong_cache: int = 64
    """DAPO overlong shaping: the penalty ramps over this many tokens before overlong_max."""
    dynamic_sampling: bool = False
    """DAPO dynamic sampling: drop zero-variance groups and sample more tasks to refill."""
    dynamic_sampling_rounds: int = 4
    """Extra rollout rounds dynamic sampling may spend refilling one step's batch."""
    gamma: float = 1.0
    """Discount for reinforce_pp, gae and turn_gae (per action token; per turn for turn_gae)."""
    lam: float = 1.0
    """GAE lambda (gae per action token, turn_gae per turn); below 1 the outcome's credit
    decays per token, which over hundreds of tokens starves the early turns."""
    turn_weight: float = 1.0
    """mt_grpo / gigpo: weight of the turn-level term added to the episode advantage."""
    critic_lr: float = 1e-3
    """gae / turn_gae: learning rate of the critic (a value head on a copy of the policy)."""
    value_clip: float | None = 0.2
    """gae / turn_gae: value clipping range around the rollout-time values (null = off)."""
    critic_warmup: int = 0
    """gae / turn_gae: first steps that train only the critic (the policy waits)."""
    stop_at_success: float = 0.0
    """Stop RL at the first periodic held-out evaluation (eval.every) reaching this
    success (0 = never; benchmarks measure steps-to-target with it)."""
    mode: Literal["sync", "async"] = "sync"
    """sync: sample a batch, then update on it. async: rollout workers keep sampling while
    the learner updates; weights sync after each update (docs/distributed.md)."""
    max_staleness: int = 2
    """async: a group whose first turn was sampled more than this many policy versions
    (updates) before the learner's is dropped and counted (0 = only the newest policy)."""
    buffer_groups: int = 0
    """async: groups in flight or waiting for the learner at most, the bound on the
    trajectory buffer (0 = 2 x tasks_per_step)."""

    @property
    def buffer_capacity(self) -> int:
        """The async buffer's bound in groups (`buffer_groups`, or its default)."""
        return self.buffer_groups or 2 * self.tasks_per_step

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.max_staleness < 0:
            raise ValueError(f"rl.max_staleness must be >= 0, got {self.max_staleness}")
        if self.buffer_groups and self.buffer_groups < self.tasks_per_step:
            raise ValueError(f"rl.buffer_groups must be 0 or >= rl.tasks_per_step "
                             f"({self.tasks_per_step}), got {self.buffer_groups}")
        if self.mode == "async" and self.dynamic_sampling:
            raise ValueError("rl.dynamic_sampling refills one sync batch; with rl.mode=async "
                             "use rl.drop_uniform_groups (uniform groups are skipped)")
        if self.dual_clip is not None and self.dual_clip <= 1.0:
            raise ValueError(f"rl.dual_clip must be > 1, got {self.dual_clip}")
        if self.tis_cap < 0 or self.overlong_max < 0 or self.critic_warmup < 0:
            raise ValueError("rl.tis_cap, rl.overlong_max and rl.critic_warmup must be >= 0")
        if self.overlong_max and not 0 < self.overlong_cache <= self.overlong_max:
            raise ValueError("rl.overlong_cache must be in (0, rl.overlong_max]")
        if self.group_size < 2:
            raise ValueError(
                f"rl.group_size must be >= 2 for a group baseline, got {self.group_size}")
        if self.steps < 0 or self.tasks_per_step < 1:
            raise ValueError("rl.steps must be >= 0 and rl.tasks_per_step >= 1")

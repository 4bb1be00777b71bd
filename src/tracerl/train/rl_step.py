"""The RL update of one step: shaping, credit (with a calibrated step evaluator), update.

This is the one RL update path: `tracerl train` runs it for every method of
tracerl.train.methods. RLStep holds what the RL stage keeps beyond the policy: the
critic, the step evaluator and its calibration verdict. `update(groups, ...)` leaves
out what cannot be trained on (`trainable`), turns the rest into token advantages with
the configured estimator and runs `ppo_update`.

Departures from GRPO as published (Shao et al. 2024), and why:
- one update per rollout batch by default (on-policy; the ratio only matters with
  `update_epochs` / `minibatches` > 1), clip-higher and token-mean from DAPO;
- the KL term is off by default (`kl_coef=0`), as in DAPO and Dr.GRPO: with a verifiable
  reward the reference anchor mostly slows learning;
- samples whose reward could not be judged (None) or whose rollout failed are dropped
  from the update and counted, never scored 0;
- nothing non-finite reaches the optimiser (issue 32): a reward that is NaN, infinite or
  absurd (rewards.base.reward_fault) is unjudged even when it arrives from Python
  without the rollout runner; advantages (and critic targets) that come out non-finite
  skip the whole update (`StepUpdate.skipped`), and ppo_update skips any optimiser step
  whose loss or gradient norm is non-finite. Skips leave the weights as they were and
  are logged and counted in the step's record (`update_skipped`, `skipped_steps`).

Turn-level credit is used only while its evaluator is trusted: at the first step (and
every `credit.recalibrate_every` steps) the evaluator is measured against Monte Carlo
branches (tracerl.credit.calibration); below `credit.min_spearman` the turn rewards are
dropped and every estimator falls back to its trajectory-level form.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tracerl.algorithms.kl import kl_estimate
from tracerl.algorithms.shaping import overlong_penalty
from tracerl.credit.calibration import CalibrationReport, calibrate, sample_states
from tracerl.credit.evaluators import (
    JudgeStepEvaluator,
    StepEvaluator,
    SubgoalEvaluator,
    ToolValidityEvaluator,
)
from tracerl.credit.faults import HardInvertedEvaluator, InvertedEvaluator
from tracerl.credit.montecarlo import MonteCarloEvaluator
from tracerl.credit.turns import anchor_ids, observation_key, turn_id_matrix, turn_rewards
from tracerl.envs.family import TaskFamily
from tracerl.evals.judges import JudgeConfig
from tracerl.policy.model import Policy
from tracerl.policy.weight_sync import EngineSync
from tracerl.rewards.base import reward_fault
from tracerl.rollout.runner import RolloutRunner
from tracerl.train.batch import TokenBatch, collate
from tracerl.train.config import CreditConfig, TrainConfig
from tracerl.train.estimators import CreditInputs
from tracerl.train.methods import estimator
from tracerl.train.optim import adamw
from tracerl.train.ppo import Critic, UpdateMetrics, ppo_update
from tracerl.train.reference import Reference
from tracerl.train.value import ValueModel
from tracerl.types import Group, Status, Trajectory

log = logging.getLogger(__name__)
CRITIC_FILE = "critic.pt"


@dataclass(frozen=True)
class StepUpdate:
    """What one RL update did: its optimiser figures, and the evaluator's calibration."""

    update: UpdateMetrics | None
    """None when nothing in the step could be trained on (or the update was skipped)."""
    calibration: CalibrationReport | None = None
    skipped: str | None = None
    """Why the whole update was skipped before any optimiser step (non-finite
    advantages or critic targets); None when it ran or had nothing to train."""


def _judged(t: Trajectory) -> bool:
    return (t.outcome_reward is not None and t.status is not Status.ERROR
            and reward_fault(t.outcome_reward) is None)


def trainable(groups: list[Group], drop_uniform: bool) -> tuple[list[Trajectory], int]:
    """Trajectories that enter the loss, and how many were left out.

    Left out: unjudged or failed samples (never scored 0), samples whose reward is no
    finite number of sane size (`reward_fault`), samples without an action token, and
    with `drop_uniform` whole groups whose judged rewards are all equal (zero
    group-relative advantage everywhere).
    """
    keep = []
    for g in groups:
        judged = [t for t in g.trajectories if _judged(t) and t.num_action_tokens > 0]
        if drop_uniform and len({t.outcome_reward for t in judged}) <= 1:
            continue
        keep += judged
    return keep, sum(len(g.trajectories) for g in groups) - len(keep)


def make_evaluator(cfg: CreditConfig, family: TaskFamily | None,
                   runner: RolloutRunner | None) -> StepEvaluator | None:
    """The configured step evaluator (None for credit.evaluator=none), broken on purpose
    when `credit.fault` says so."""
    evaluator = _base_evaluator(cfg, family, runner)
    if evaluator is None or cfg.fault == "none":
        return evaluator
    if cfg.fault == "inverted":
        return InvertedEvaluator(evaluator)
    hard = getattr(family, "hard", None)
    if hard is None:
        raise ValueError(f"credit.fault=hard_inverted: task family "
                         f"{getattr(family, 'name', None)!r} has no hard(trajectory, turn_index)")
    return HardInvertedEvaluator(evaluator, hard)


def _base_evaluator(cfg: CreditConfig, family: TaskFamily | None,
                    runner: RolloutRunner | None) -> StepEvaluator | None:
    if cfg.evaluator == "none":
        return None
    if runner is None and (cfg.evaluator == "monte_carlo" or cfg.calibrate):
        raise ValueError("Monte Carlo credit (credit.evaluator=monte_carlo, or "
                         "credit.calibrate=true) branches rollouts from an env; without a "
                         "rollout runner (trajectories recorded by `tracerl serve`) use "
                         "credit.calibrate=false with another evaluator")
    if cfg.evaluator == "subgoal":
        check = getattr(family, "subgoal", None)
        if check is None:
            name = getattr(family, "name", None)
            raise ValueError(f"credit.evaluator=subgoal: task family {name!r} has no "
                             "subgoal(trajectory, turn_index) check")
        return SubgoalEvaluator(check)
    builders = {
        "tool_validity": lambda: ToolValidityEvaluator(),
        "judge": lambda: JudgeStepEvaluator(JudgeConfig(cfg.judge_url, cfg.judge_model)),
    }
    if cfg.evaluator == "monte_carlo":
        assert runner is not None  # refused above
        return MonteCarloEvaluator(runner, cfg.calibration_samples)
    return builders[cfg.evaluator]()


class RLStep:
    """`runner` may be None when the trajectories come from elsewhere (`tracerl serve`
    records them): then only credit that needs no branching from an env is available."""

    def __init__(self, policy: Policy, config: TrainConfig, family: TaskFamily | None,
                 runner: RolloutRunner | None, ref: Reference | None = None,
                 engine: EngineSync | None = None) -> None:
        self.policy = policy
        self.engine = engine
        """Syncs the weights into a sampler holding its own copy (rl_step calls it)."""
        self.cfg = config
        self.family = family
        self.ref = ref
        self.method = estimator(config.rl)
        self.evaluator = (make_evaluator(config.credit, family, runner)
                          if self.method.turn_rewards else None)
        self.reference = (MonteCarloEvaluator(runner, config.credit.calibration_samples)
                          if runner is not None else None)
        self.calibration: CalibrationReport | None = None
        self.critic: ValueModel | None = None
        self.critic_opt: torch.optim.Optimizer | None = None
        if self.method.critic:
            device = next(policy.model.parameters()).device
            self.critic = ValueModel(policy.model).to(device)
            self.critic_opt = adamw(self.critic.parameters(), config.rl.critic_lr)

    # -- checkpoints -------------------------------------------------------------------
    def save(self, checkpoint_dir: Path) -> None:
        """Write the critic and its optimizer beside a policy checkpoint (if any)."""
        if self.critic is not None and self.critic_opt is not None:
            torch.save({"critic": self.critic.state_dict(),
                        "optimizer": self.critic_opt.state_dict()}, checkpoint_dir / CRITIC_FILE)

    def load(self, checkpoint_dir: Path) -> None:
        """Restore the critic on resume (a missing file leaves the fresh critic)."""
        path = checkpoint_dir / CRITIC_FILE
        if self.critic is not None and self.critic_opt is not None and path.is_file():
            state = torch.load(path, weights_only=True)
            self.critic.load_state_dict(state["critic"])
            self.critic_opt.load_state_dict(state["optimizer"])

    # -- turn-level signal -------------------------------------------------------------
    def _trusted_evaluator(self, trajs: list[Trajectory], step: int) -> StepEvaluator | None:
        credit = self.cfg.credit
        if self.evaluator is None or not credit.calibrate:
            return self.evaluator
        every = credit.recalibrate_every
        if self.reference is None:  # make_evaluator refused calibration without a runner
            return self.evaluator
        if self.calibration is None or (every and step % every == 0):
            rng = random.Random(f"calibrate/{self.cfg.seed}/{step}")
            states = sample_states(trajs, credit.calibration_states, rng, self.evaluator)
            self.calibration = calibrate(self.evaluator, self.reference, states,
                                         credit.min_spearman)
        return self.evaluator if self.calibration.trusted else None

    def _state_key(self) -> Any:
        return getattr(self.family, "state_key", observation_key)

    # -- rewards -------------------------------------------------------------------------
    def _rewards(self, keep: list[Trajectory]) -> torch.Tensor:
        rewards = torch.tensor([float(t.outcome_reward or 0.0) for t in keep])  # (B,)
        rl = self.cfg.rl
        if rl.overlong_max:
            lengths = torch.tensor([len(t.response_ids()) for t in keep])
            rewards = rewards + overlong_penalty(lengths, rl.overlong_max, rl.overlong_cache)
        return rewards

    def _ref_logp(self, batch: TokenBatch) -> torch.Tensor | None:
        if self.ref is None or self.cfg.rl.kl_coef <= 0:
            return None
        return self.ref.batch_logprobs(batch, self.cfg.rl.temperature)

    def inputs(self, groups: list[Group], keep: list[Trajectory], batch: TokenBatch,
               ref_logp: torch.Tensor | None, step: int) -> CreditInputs:
        rl = self.cfg.rl
        gid = {id(t): i for i, g in enumerate(groups) for t in g.trajectories}
        k = max(len(t.turns) for t in keep)
        evaluator = self._trusted_evaluator(keep, step) if self.evaluator else None
        kl_pen = None
        if ref_logp is not None and rl.kl_placement == "reward":
            policy_logp = batch.old_logp  # the sampler's logprobs: the policy that acted
            kl_pen = kl_estimate(policy_logp, ref_logp, rl.kl_estimator)
        values = None
        if self.critic is not None:
            with torch.no_grad():
                values = self.critic(batch.input_ids, batch.attention_mask) * batch.loss_mask
        return CreditInputs(
            batch=batch, rewards=self._rewards(keep),
            group_ids=torch.tensor([gid[id(t)] for t in keep]),
            turn_index=turn_id_matrix(keep, batch.loss_mask.shape[1]),
            turn_rewards=turn_rewards(keep, evaluator, k) if evaluator else None,
            anchors=anchor_ids(keep, k, self._state_key()) if self.method.anchors else None,
            values=values, kl=kl_pen)

    # -- the update ----------------------------------------------------------------------
    def update(self, groups: list[Group], optimizer: torch.optim.Optimizer, step: int,
               generator: torch.Generator) -> StepUpdate:
        """Credit and update on one step's groups (`update` is None if nothing to train)."""
        rl = self.cfg.rl
        keep, dropped = trainable(groups, rl.drop_uniform_groups and self.method.group_baseline)
        if not keep:
            return StepUpdate(None, self.calibration)
        device = next(self.policy.model.parameters()).device
        batch = collate(keep, self.policy.pad_id).to(device)
        ref_logp = self._ref_logp(batch)
        inp = self.inputs(groups, keep, batch, ref_logp, step)
        out = self.method.fn(inp, rl)
        bad = _non_finite(out.advantages, out.returns if self.critic is not None else None)
        if bad is not None:
            log.warning("step %d: update skipped, weights unchanged: %s", step, bad)
            return StepUpdate(None, self.calibration, skipped=bad)
        batch.advantages = out.advantages.to(device)
        _write_back(keep, batch.advantages)
        critic = None
        if self.critic is not None and self.critic_opt is not None and out.returns is not None:
            assert inp.values is not None
            critic = Critic(self.critic, self.critic_opt, out.returns.detach(), inp.values)
        metrics = ppo_update(self.policy.model, optimizer, batch, rl, generator, dropped,
                             ref_logp, critic, train_policy=step >= rl.critic_warmup,
                             micro_tokens=self.cfg.micro_batch_tokens)
        return StepUpdate(metrics, self.calibration)


def _non_finite(advantages: torch.Tensor, returns: torch.Tensor | None) -> str | None:
    """Why the credit cannot be trained on (a non-finite advantage or return), or None."""
    if not bool(torch.isfinite(advantages).all()):
        return "non-finite advantages"
    if returns is not None and not bool(torch.isfinite(returns).all()):
        return "non-finite critic targets"
    return None


def _write_back(keep: list[Trajectory], advantages: torch.Tensor) -> None:
    """Each trajectory's response-token advantages (for traces and inspection)."""
    for i, t in enumerate(keep):
        start = len(t.prompt_ids) - 1
        t.advantages = advantages[i, start:start + len(t.response_ids())].tolist()

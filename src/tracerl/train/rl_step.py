"""The RL update of one step: shaping, credit (with a calibrated step evaluator), update.

RLStep holds what the RL stage keeps beyond the policy: the critic, the step evaluator
and its calibration verdict. `update(groups, ...)` turns one step's groups into token
advantages via ESTIMATORS[rl.advantage] and runs `ppo_update`.

Turn-level credit is used only while its evaluator is trusted: at the first step (and
every `credit.recalibrate_every` steps) the evaluator is measured against Monte Carlo
branches (tracerl.credit.calibration); below `credit.min_spearman` the turn rewards are
dropped and every estimator falls back to its trajectory-level form.
"""

from __future__ import annotations

import logging
import random
from dataclasses import asdict
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
from tracerl.credit.montecarlo import MonteCarloEvaluator
from tracerl.credit.turns import anchor_ids, observation_key, turn_id_matrix, turn_rewards
from tracerl.envs.family import TaskFamily
from tracerl.evals.judges import JudgeConfig
from tracerl.policy.model import Policy
from tracerl.rollout.runner import RolloutRunner
from tracerl.train.batch import TokenBatch, collate
from tracerl.train.config import CreditConfig, TrainConfig
from tracerl.train.estimators import (
    CRITIC_ESTIMATORS,
    ESTIMATORS,
    GROUP_BASELINES,
    CreditInputs,
)
from tracerl.train.grpo import trainable
from tracerl.train.ppo import Critic, logprobs_no_grad, ppo_update
from tracerl.train.value import ValueModel
from tracerl.types import Group, Trajectory

log = logging.getLogger(__name__)
TURN_ESTIMATORS = frozenset({"mt_grpo", "turn_gae", "gigpo"})
CRITIC_FILE = "critic.pt"


def make_evaluator(cfg: CreditConfig, family: TaskFamily | None,
                   runner: RolloutRunner) -> StepEvaluator | None:
    """The configured step evaluator (None for credit.evaluator=none)."""
    if cfg.evaluator == "none":
        return None
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
        "monte_carlo": lambda: MonteCarloEvaluator(runner, cfg.calibration_samples),
    }
    return builders[cfg.evaluator]()


class RLStep:
    def __init__(self, policy: Policy, config: TrainConfig, family: TaskFamily | None,
                 runner: RolloutRunner, ref_model: torch.nn.Module | None = None) -> None:
        self.policy = policy
        self.cfg = config
        self.family = family
        self.ref_model = ref_model
        self.evaluator = (make_evaluator(config.credit, family, runner)
                          if config.rl.advantage in TURN_ESTIMATORS else None)
        self.reference = MonteCarloEvaluator(runner, config.credit.calibration_samples)
        self.calibration: CalibrationReport | None = None
        self.critic: ValueModel | None = None
        self.critic_opt: torch.optim.Optimizer | None = None
        if config.rl.advantage in CRITIC_ESTIMATORS:
            device = next(policy.model.parameters()).device
            self.critic = ValueModel(policy.model).to(device)
            self.critic_opt = torch.optim.AdamW(self.critic.parameters(), lr=config.rl.critic_lr,
                                                weight_decay=0.0)

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
        if self.ref_model is None or self.cfg.rl.kl_coef <= 0:
            return None
        return logprobs_no_grad(self.ref_model, batch, self.cfg.rl.temperature)

    def inputs(self, groups: list[Group], keep: list[Trajectory], batch: TokenBatch,
               ref_logp: torch.Tensor | None, step: int) -> CreditInputs:
        rl = self.cfg.rl
        gid = {id(t): i for i, g in enumerate(groups) for t in g.trajectories}
        k = max(len(t.turns) for t in keep)
        evaluator = self._trusted_evaluator(keep, step) if self.evaluator else None
        kl_pen = None
        if ref_logp is not None and rl.kl_placement == "reward":
            policy_logp = batch.old_logp  # the sampler's logprobs: the policy that acted
            kl_pen = rl.kl_coef * kl_estimate(policy_logp, ref_logp, rl.kl_estimator)
        values = None
        if self.critic is not None:
            with torch.no_grad():
                values = self.critic(batch.input_ids, batch.attention_mask) * batch.loss_mask
        return CreditInputs(
            batch=batch, rewards=self._rewards(keep),
            group_ids=torch.tensor([gid[id(t)] for t in keep]),
            turn_index=turn_id_matrix(keep, batch.loss_mask.shape[1]),
            turn_rewards=turn_rewards(keep, evaluator, k) if evaluator else None,
            anchors=anchor_ids(keep, k, self._state_key()) if rl.advantage == "gigpo" else None,
            values=values, kl_penalty=kl_pen)

    # -- the update ----------------------------------------------------------------------
    def update(self, groups: list[Group], optimizer: torch.optim.Optimizer, step: int,
               generator: torch.Generator) -> dict[str, float]:
        """Credit and update on one step's groups; returns metrics (empty if nothing to train)."""
        rl = self.cfg.rl
        keep, dropped = trainable(groups, rl.drop_uniform_groups
                                  and rl.advantage in GROUP_BASELINES)
        if not keep:
            return {}
        device = next(self.policy.model.parameters()).device
        batch = collate(keep, self.policy.pad_id).to(device)
        ref_logp = self._ref_logp(batch)
        inp = self.inputs(groups, keep, batch, ref_logp, step)
        out = ESTIMATORS[rl.advantage](inp, rl)
        batch.advantages = out.advantages.to(device)
        _write_back(keep, batch.advantages)
        critic = None
        if self.critic is not None and self.critic_opt is not None and out.returns is not None:
            assert inp.values is not None
            critic = Critic(self.critic, self.critic_opt, out.returns.detach(), inp.values)
        m = ppo_update(self.policy.model, optimizer, batch, rl, generator, dropped, ref_logp,
                       critic, train_policy=step >= rl.critic_warmup)
        values = {k: float(v) for k, v in asdict(m).items()}
        if self.calibration is not None:
            values.update({"calib_spearman": self.calibration.spearman,
                           "calib_accuracy": self.calibration.accuracy,
                           "calib_trusted": float(self.calibration.trusted)})
        return values


def _write_back(keep: list[Trajectory], advantages: torch.Tensor) -> None:
    """Each trajectory's response-token advantages (for traces and inspection)."""
    for i, t in enumerate(keep):
        start = len(t.prompt_ids) - 1
        t.advantages = advantages[i, start:start + len(t.response_ids())].tolist()

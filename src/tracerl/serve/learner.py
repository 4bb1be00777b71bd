"""Training the served policy on the episodes its clients played.

`ServedLearner.step()` takes every trajectory whose episode has finished (reward posted),
groups them by task id, and runs the one RL update path (`RLStep.update`, the same call
`tracerl train` makes each step) while holding the batcher's lock, so no batch samples
from half-updated weights. The engine then serves the new weights at once (the sampler
shares the model) and records the new policy version on every later call.

Episodes still open when a step runs wait for a later step; their early calls were
sampled by an older policy, which is fine for the loss: the behaviour log-probabilities
are the recorded ones, and the PPO ratio corrects for the difference (with
`rl.update_epochs` / `minibatches` > 1, or `rl.tis_cap`, exactly as in training).

An update either happens whole or not at all (issue 32): before it, the trained
weights and the optimiser states are copied (one copy of the trainable parameters and
of AdamW's moments; for a LoRA adapter, the adapter's); if the update or its
checkpoint raises, they are put back, the policy version stays, and the trajectories
are ready again for the next call. A step the RL update skipped for non-finite values
(tracerl.train.rl_step) changed nothing and does not bump the version. Every step is
logged (one line: version, trajectories, reward mean, loss, skips) and counted.
"""

from __future__ import annotations

import copy
import logging
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tracerl.policy.lora import trainable_parameters
from tracerl.rollout.runner import RolloutStats
from tracerl.serve.engine import Engine
from tracerl.serve.episodes import group_by_task
from tracerl.train import checkpoint as ckpt
from tracerl.train.config import TrainConfig
from tracerl.train.methods import needs_reference
from tracerl.train.metrics import RLStepMetrics, StepTimes
from tracerl.train.optim import adamw
from tracerl.train.reference import Reference
from tracerl.train.rl_step import RLStep, StepUpdate
from tracerl.train.rundir import write_config
from tracerl.train.step import step_seed
from tracerl.types import Trajectory

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServedStep:
    """One update on served episodes."""

    step: int
    """Updates applied so far; the policy version now served."""
    groups: int
    trajectories: int
    metrics: RLStepMetrics
    updated: bool
    """Whether the weights changed (False: nothing trainable, or every step skipped)."""

    def reply(self) -> dict[str, Any]:
        """The JSON reply of POST /v1/train: counts as integers, figures as floats, and
        a figure that is not finite as null (JSON has no NaN)."""
        figures = {k: (v if math.isfinite(v) else None)
                   for k, v in self.metrics.record().items()}
        return {**figures, "updated": self.updated, "step": self.step,
                "groups": self.groups, "trajectories": self.trajectories}


@dataclass
class LearnerStats:
    steps: int = 0
    """Updates applied (the policy version)."""
    skipped_updates: int = 0
    """Calls whose update was skipped for non-finite advantages (weights unchanged)."""
    skipped_steps: int = 0
    """Optimiser steps skipped for a non-finite loss or gradient (weights unchanged)."""
    failed: int = 0
    """Calls whose update raised and was rolled back."""


class _RestorePoint:
    """Copies of the trained parameters and optimiser states, to undo a failed update."""

    def __init__(self, params: list[torch.nn.Parameter],
                 optimizers: list[torch.optim.Optimizer]) -> None:
        self.params = params
        self.values = [p.detach().clone() for p in params]
        self.optimizers = optimizers
        self.states = [copy.deepcopy(o.state_dict()) for o in optimizers]

    @torch.no_grad()
    def restore(self) -> None:
        for p, v in zip(self.params, self.values, strict=True):
            p.copy_(v)
        for o, s in zip(self.optimizers, self.states, strict=True):
            o.load_state_dict(s)


class ServedLearner:
    """RL on what an engine recorded; `run_dir` (optional) gets the config and a checkpoint
    per step, so it is a run directory `tracerl eval` and `tracerl serve` read."""

    def __init__(self, engine: Engine, config: TrainConfig, run_dir: Path | None = None
                 ) -> None:
        self.engine = engine
        self.config = config
        self.run_dir = run_dir
        policy = engine.policy
        ref = Reference.of(policy.model) if needs_reference(config.rl) else None
        self.rl = RLStep(policy, config, None, None, ref)
        self.optimizer = adamw(trainable_parameters(policy.model), config.rl.lr)
        self.stats = LearnerStats()
        self._one_at_a_time = threading.Lock()
        if run_dir is not None:  # so that `tracerl eval` and `tracerl serve` read it back
            write_config(run_dir, config)

    @property
    def steps(self) -> int:
        return self.stats.steps

    def step(self, min_trajectories: int = 1) -> ServedStep | None:
        """Update on every finished episode; None (nothing taken) when fewer than
        `min_trajectories` are ready. On an exception nothing has changed: weights,
        optimiser, version and the ready trajectories are as before."""
        recorder = self.engine.recorder
        with self._one_at_a_time:
            with recorder.lock:
                if len(recorder.ready) < min_trajectories:
                    return None
                trajs = recorder.take()
            try:
                return self.update(trajs)
            except BaseException:
                recorder.give_back(trajs)
                self.stats.failed += 1
                raise

    def _restore_point(self) -> _RestorePoint:
        params = list(trainable_parameters(self.engine.policy.model))
        optimizers: list[torch.optim.Optimizer] = [self.optimizer]
        if self.rl.critic is not None and self.rl.critic_opt is not None:
            params += list(self.rl.critic.parameters())
            optimizers.append(self.rl.critic_opt)
        return _RestorePoint(params, optimizers)

    def update(self, trajs: list[Trajectory]) -> ServedStep:
        """One update on `trajs`, all or nothing (see the module docstring)."""
        groups = group_by_task(trajs)
        batcher = self.engine.batcher
        t0 = time.perf_counter()
        with batcher.lock:
            undo = self._restore_point()
            try:
                update = self.rl.update(groups, self.optimizer, self.steps,
                                        torch.Generator().manual_seed(
                                            step_seed(self.config.seed, self.steps)))
                changed = update.update is not None and update.update.applied_steps > 0
                if changed and self.run_dir is not None:
                    self._checkpoint(self.steps + 1)
            except BaseException:
                undo.restore()
                raise
            if changed:
                self.stats.steps += 1
                self.engine.policy_version = self.stats.steps
        update_s = time.perf_counter() - t0
        self.stats.skipped_updates += update.skipped is not None
        self.stats.skipped_steps += update.update.skipped_steps if update.update else 0
        metrics = self._metrics(trajs, update, update_s)
        result = ServedStep(self.steps, len(groups), len(trajs), metrics, changed)
        self._log(result)
        return result

    def _metrics(self, trajs: list[Trajectory], update: StepUpdate, update_s: float
                 ) -> RLStepMetrics:
        stats = RolloutStats(trajectories=len(trajs),
                             env_errors=sum(t.status.value == "error" for t in trajs),
                             unjudged=sum(t.outcome_reward is None for t in trajs),
                             sampled_tokens=sum(t.num_action_tokens for t in trajs))
        tokens = sum(len(t.token_ids()) for t in trajs if t.advantages is not None)
        b = self.engine.batcher.stats
        times = StepTimes(0.0, update_s, sample_tok_s=b.tokens / max(b.sample_seconds, 1e-9),
                          update_tok_s=tokens / max(update_s, 1e-9),
                          sample_s=b.sample_seconds)
        return RLStepMetrics.of(trajs, stats, times, update)

    def _log(self, result: ServedStep) -> None:
        r, u = result.metrics.record(), result.metrics.update
        loss = "-" if "loss" not in r else f"{r['loss']:.4g}"
        skipped = u.skipped or f"{int(r.get('skipped_steps', 0))} optimiser steps"
        log.info("train: version %d, %d trajectories (%d unjudged), reward mean %.4g, "
                 "loss %s, skipped %s", result.step, result.trajectories,
                 result.metrics.unjudged, r["reward_mean"], loss, skipped)

    def _checkpoint(self, steps: int) -> None:
        assert self.run_dir is not None
        # A finished stage list: `tracerl train --resume` would not redo the run's stages.
        state = ckpt.TrainerState(stage_index=len(self.config.stages), rl_step=steps)
        path = ckpt.save_checkpoint(self.run_dir, self.engine.policy, state,
                                    self.optimizer, ckpt.rng_state(None))
        self.rl.save(path)

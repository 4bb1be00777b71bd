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
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

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
from tracerl.train.rl_step import RLStep
from tracerl.train.rundir import write_config
from tracerl.train.step import step_seed
from tracerl.types import Trajectory


@dataclass(frozen=True)
class ServedStep:
    """One update on served episodes."""

    step: int
    """Updates done so far (this one included); the new policy version."""
    groups: int
    trajectories: int
    metrics: RLStepMetrics

    def record(self) -> dict[str, float]:
        return {"step": float(self.step), "groups": float(self.groups),
                "trajectories": float(self.trajectories), **self.metrics.record()}


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
        self.steps = 0
        if run_dir is not None:  # so that `tracerl eval` and `tracerl serve` read it back
            write_config(run_dir, config)

    def step(self, min_trajectories: int = 1) -> ServedStep | None:
        """Update on every finished episode; None (nothing taken) when fewer than
        `min_trajectories` are ready."""
        recorder = self.engine.recorder
        with recorder.lock:
            if len(recorder.ready) < min_trajectories:
                return None
            trajs = recorder.take()
        return self.update(trajs)

    def update(self, trajs: list[Trajectory]) -> ServedStep:
        groups = group_by_task(trajs)
        batcher = self.engine.batcher
        t0 = time.perf_counter()
        with batcher.lock:
            update = self.rl.update(groups, self.optimizer, self.steps,
                                    torch.Generator().manual_seed(
                                        step_seed(self.config.seed, self.steps)))
            self.steps += 1
            self.engine.policy_version = self.steps
        update_s = time.perf_counter() - t0
        stats = RolloutStats(trajectories=len(trajs),
                             env_errors=sum(t.status.value == "error" for t in trajs),
                             unjudged=sum(t.outcome_reward is None for t in trajs),
                             sampled_tokens=sum(t.num_action_tokens for t in trajs))
        tokens = sum(len(t.token_ids()) for t in trajs if t.advantages is not None)
        b = batcher.stats
        times = StepTimes(0.0, update_s, sample_tok_s=b.tokens / max(b.sample_seconds, 1e-9),
                          update_tok_s=tokens / max(update_s, 1e-9),
                          sample_s=b.sample_seconds)
        metrics = RLStepMetrics.of(trajs, stats, times, update)
        if self.run_dir is not None:
            self._checkpoint()
        return ServedStep(self.steps, len(groups), len(trajs), metrics)

    def _checkpoint(self) -> None:
        assert self.run_dir is not None
        # A finished stage list: `tracerl train --resume` would not redo the run's stages.
        state = ckpt.TrainerState(stage_index=len(self.config.stages), rl_step=self.steps)
        with self.engine.batcher.lock:
            path = ckpt.save_checkpoint(self.run_dir, self.engine.policy, state,
                                        self.optimizer, ckpt.rng_state(None))
        self.rl.save(path)

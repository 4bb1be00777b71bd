"""One RL step, as `tracerl train` runs it: collect groups, credit, update, measure.

`rl_step` is public for people who write their own loop: build a runner
(tracerl.train.runner.build_runner) and an RLStep once, then call it once per step.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from tracerl.envs.family import TaskFamily
from tracerl.rollout.runner import RolloutRunner
from tracerl.train.metrics import RLStepMetrics, StepTimes
from tracerl.train.rl_step import RLStep
from tracerl.train.sampling import collect_groups
from tracerl.types import Trajectory


@dataclass(frozen=True)
class StepResult:
    metrics: RLStepMetrics
    trajectories: list[Trajectory]
    """Every trajectory sampled this step (for tracing or inspection)."""


class StepInterrupted(KeyboardInterrupt):
    """Ctrl-C while a learner elsewhere (a Ray actor) ran a step it went on to finish:
    the step happened, so the trainer records it before it checkpoints and stops, and
    the checkpoint's step count and policy version agree."""

    def __init__(self, result: StepResult) -> None:
        super().__init__()
        self.result = result


def step_seed(seed: int, step: int) -> int:
    """The seed of RL step `step` (0-based): tasks and minibatch order, resume-proof."""
    return seed * 1_000_003 + step + 1


def rl_step(learner: RLStep, runner: RolloutRunner, family: TaskFamily,
            optimizer: torch.optim.Optimizer, step: int,
            trace_failures: int | None = None) -> StepResult:
    """Sample `rl.tasks_per_step` train tasks, update the policy once, report.

    `step` (0-based) seeds the tasks and the minibatch order and is the policy version
    recorded on the trajectories. A learner with an engine (`RLStep(engine=...)`, a
    sampler holding its own weights) lets it sleep during the update and syncs it after.
    """
    cfg = learner.cfg.rl
    seed = step_seed(learner.cfg.seed, step)
    t0 = time.perf_counter()
    collected = collect_groups(runner, family, cfg, seed, step)
    rollout_s = time.perf_counter() - t0
    if learner.engine is not None:  # the engine sleeps through the update (vLLM)
        learner.engine.release()
    t0 = time.perf_counter()
    update = learner.update(collected.train, optimizer, step,
                            torch.Generator().manual_seed(seed))
    update_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    if learner.engine is not None:
        learner.engine.push(learner.policy.model)
    sync_s = time.perf_counter() - t0
    trajs = [t for g in collected.sampled for t in g.trajectories]
    tokens = sum(len(t.token_ids()) for g in collected.train for t in g.trajectories
                 if t.advantages is not None)
    stats = collected.stats
    times = StepTimes(rollout_s, update_s,
                      sample_tok_s=stats.sampled_tokens / max(stats.sample_seconds, 1e-9),
                      update_tok_s=tokens / max(update_s, 1e-9), sync_s=sync_s,
                      sample_s=stats.sample_seconds)
    metrics = RLStepMetrics.of(trajs, stats, times, update,
                               sampling_rounds=collected.rounds if cfg.dynamic_sampling else None,
                               trace_failures=trace_failures)
    return StepResult(metrics, trajs)

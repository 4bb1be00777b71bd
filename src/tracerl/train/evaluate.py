"""Held-out evaluation of a policy on a task family: success rate and tool use."""

from __future__ import annotations

from dataclasses import dataclass, replace

from tracerl.rollout.runner import RolloutRunner
from tracerl.types import Task, Trajectory

SUCCESS_THRESHOLD = 1.0 - 1e-6


@dataclass(frozen=True)
class EvalResult:
    success: float
    """Fraction of samples with full outcome reward."""
    mean_reward: float
    tool_use: float
    """Fraction of samples that made at least one tool call."""
    tool_errors: float
    """Tool errors per sample."""
    truncated: float
    unjudged: int
    samples: int


def is_success(t: Trajectory) -> bool:
    return t.outcome_reward is not None and t.outcome_reward >= SUCCESS_THRESHOLD


def summarize(trajectories: list[Trajectory]) -> EvalResult:
    judged = [t for t in trajectories if t.outcome_reward is not None]
    n = max(1, len(trajectories))
    return EvalResult(
        success=sum(is_success(t) for t in trajectories) / n,
        mean_reward=sum(t.outcome_reward or 0.0 for t in judged) / max(1, len(judged)),
        tool_use=sum(t.metrics.get("tool_calls", 0.0) > 0 for t in trajectories) / n,
        tool_errors=sum(t.metrics.get("tool_errors", 0.0) for t in trajectories) / n,
        truncated=sum(t.status.value == "truncated" for t in trajectories) / n,
        unjudged=len(trajectories) - len(judged),
        samples=len(trajectories),
    )


def evaluate_policy(runner: RolloutRunner, tasks: list[Task], samples: int,
                    temperature: float) -> tuple[EvalResult, list[Trajectory]]:
    """Sample `samples` trajectories per held-out task and summarise them."""
    saved = runner.config
    runner.config = replace(saved, group_size=samples, temperature=temperature)
    try:
        groups = runner.run(tasks)
    finally:
        runner.config = saved
    trajs = [t for g in groups for t in g.trajectories]
    return summarize(trajs), trajs

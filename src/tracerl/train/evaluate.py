"""Held-out evaluation: of the policy being trained, and of a saved run or model.

`evaluate_checkpoint` samples `k` trajectories per held-out task with the same family
and rollout settings the run trained with (its config.yaml), and reports pass@1, pass@k
(tracerl.evals.passk), mean reward and tool-use statistics. A family with an
`eval_tasks(split, n)` method (a benchmark with a fixed list of ids, like humaneval) is
scored on each of its first `n` held-out tasks once; others draw `n` tasks by seed. The
report keeps every task's samples and passes, so pass@k for any k <= samples can be
recomputed from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from tracerl.envs.family import TaskFamily
from tracerl.evals.passk import pass_at_k
from tracerl.policy.precision import weights_dtype
from tracerl.rollout.runner import RolloutRunner
from tracerl.train import configlib
from tracerl.train.checkpoint import latest_checkpoint, load_checkpoint_policy
from tracerl.train.config import TrainConfig
from tracerl.train.runner import (
    build_runner,
    build_sampler,
    build_task_family,
    check_references,
    engine_sync,
)
from tracerl.types import Group, Task, Trajectory

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
    groups = runner.run(tasks, group_size=samples, temperature=temperature)
    trajs = [t for g in groups for t in g.trajectories]
    return summarize(trajs), trajs


@dataclass(frozen=True)
class CheckpointReport:
    model: str
    family: str
    tasks: int
    samples_per_task: int
    pass_at_1: float
    pass_at_k: float
    mean_reward: float
    tool_use: float
    tool_calls_per_sample: float
    tool_errors_per_sample: float
    truncated: float
    unjudged: int
    per_task: list[dict[str, Any]] = field(default_factory=list)
    """{"task_id", "samples", "passed"} per task, in the order evaluated."""

    def table(self) -> str:
        """One row per field; pass@1 and pass@k labelled with their k (pass@8)."""
        rows = {k: v for k, v in asdict(self).items() if k != "per_task"}
        labels = {"pass_at_1": "pass@1", "pass_at_k": f"pass@{self.samples_per_task}"}
        rows = {labels.get(k, k): v for k, v in rows.items()}
        width = max(len(k) for k in rows)
        return "\n".join(f"{k.ljust(width)}  {v:.4f}" if isinstance(v, float) else
                         f"{k.ljust(width)}  {v}" for k, v in rows.items())


def resolve(path: Path) -> tuple[Path, TrainConfig | None]:
    """A run directory -> (its latest checkpoint, its config); a model directory or a
    model name -> (it, None)."""
    if (path / "config.yaml").is_file() and (path / "checkpoints").is_dir():
        ckpt = latest_checkpoint(path)
        if ckpt is None:
            raise FileNotFoundError(f"run directory {path} has no complete checkpoint")
        return ckpt, configlib.load(TrainConfig, str(path / "config.yaml"))
    return path, None


def sample_checkpoint(path: str | Path, overrides: list[str],
                      choose: Callable[[TaskFamily], list[Task]], k: int, temperature: float,
                      seed: int = 0) -> tuple[Path, TaskFamily, list[Group]]:
    """`k` trajectories per task of `choose(family)`, sampled by the checkpoint (or
    model) at `path` with the family and rollout settings of its run (or `overrides`)."""
    model_dir, run_config = resolve(Path(path))
    # Without a run's config, the model evaluated is the one given (a directory or a
    # name), so the family is built for it (tools described as the model records).
    base: dict[str, Any] = configlib.to_dict(run_config) if run_config else {"model": str(path)}
    cfg: TrainConfig = configlib.load(TrainConfig, None, overrides, base=base)
    check_references(cfg)  # a family given from Python and not recorded: say so first
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    policy = load_checkpoint_policy(model_dir, cfg.device, weights_dtype(cfg.dtype))
    family = build_task_family(cfg, policy)
    sampler = build_sampler(cfg, policy, seed)
    engine = engine_sync(cfg, sampler)
    if engine is not None:  # the checkpoint's weights, adapter included
        engine.push(policy.model, everything=True)
    runner = build_runner(cfg, policy, family, sampler)
    return model_dir, family, runner.run(choose(family), group_size=k, temperature=temperature)


def heldout_tasks(family: TaskFamily, tasks: int, seed: int) -> list[Task]:
    """The family's fixed held-out tasks when it has them (`eval_tasks`), else `tasks`
    drawn from its held-out split."""
    fixed = getattr(family, "eval_tasks", None)
    return fixed("heldout", tasks) if callable(fixed) else family.tasks("heldout", tasks,
                                                                        seed=seed)


def evaluate_checkpoint(path: str | Path, overrides: list[str], tasks: int, k: int,
                        temperature: float, seed: int = 0) -> CheckpointReport:
    model_dir, family, groups = sample_checkpoint(
        path, overrides, lambda f: heldout_tasks(f, tasks, seed), k, temperature, seed)
    trajs = [t for g in groups for t in g.trajectories]
    s = summarize(trajs)
    wins = [sum(is_success(t) for t in g.trajectories) for g in groups]
    return CheckpointReport(
        model=str(model_dir), family=family.name, tasks=len(groups), samples_per_task=k,
        pass_at_1=sum(pass_at_k(k, c, 1) for c in wins) / len(wins),
        pass_at_k=sum(pass_at_k(k, c, k) for c in wins) / len(wins),
        mean_reward=s.mean_reward, tool_use=s.tool_use,
        tool_calls_per_sample=sum(t.metrics["tool_calls"] for t in trajs) / len(trajs),
        tool_errors_per_sample=s.tool_errors, truncated=s.truncated, unjudged=s.unjudged,
        per_task=[{"task_id": g.task.id, "samples": len(g.trajectories), "passed": c}
                  for g, c in zip(groups, wins, strict=True)])

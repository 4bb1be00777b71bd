"""Evaluate a checkpoint (or any local model) on a task family's held-out split.

Samples `k` trajectories per held-out task with the real rollout runner and reports
pass@1, pass@k (the unbiased estimator of Chen et al. 2021, "Evaluating Large Language
Models Trained on Code", with n = k samples), mean reward and tool-use statistics.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from tracerl.policy.model import load_policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutRunner
from tracerl.train import configlib
from tracerl.train.checkpoint import latest_checkpoint
from tracerl.train.config import TrainConfig
from tracerl.train.evaluate import is_success, summarize


def pass_at_k(n: int, c: int, k: int) -> float:
    """P(at least one of k samples passes) from n samples with c passing: 1 - C(n-c,k)/C(n,k)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


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

    def table(self) -> str:
        rows = asdict(self)
        width = max(len(k) for k in rows)
        return "\n".join(f"{k.ljust(width)}  {v:.4f}" if isinstance(v, float) else
                         f"{k.ljust(width)}  {v}" for k, v in rows.items())


def resolve(path: Path) -> tuple[Path, TrainConfig | None]:
    """A run directory -> (its latest checkpoint, its config); a model dir -> (it, None)."""
    if (path / "config.yaml").is_file() and (path / "checkpoints").is_dir():
        ckpt = latest_checkpoint(path)
        if ckpt is None:
            raise FileNotFoundError(f"run directory {path} has no complete checkpoint")
        data = yaml.safe_load((path / "config.yaml").read_text())
        return ckpt, configlib.from_dict(TrainConfig, data)
    return path, None


def evaluate_checkpoint(path: str | Path, overrides: list[str], tasks: int, k: int,
                        temperature: float, seed: int = 0) -> CheckpointReport:
    from tracerl.train.trainer import make_family

    model_dir, run_config = resolve(Path(path))
    base: dict[str, Any] = configlib.to_dict(run_config) if run_config else {}
    cfg: TrainConfig = configlib.load(TrainConfig, None, overrides, base=base)
    policy = load_policy(model_dir, cfg.device)
    family = make_family(cfg)
    rollout = replace(cfg.rl.rollout(), group_size=k, temperature=temperature)
    runner = RolloutRunner(
        TransformersSampler(policy.model, policy.pad_id, seed=seed), ChatRenderer(policy.tokenizer),
        policy.stop_ids, family.make_env, family.reward, rollout)
    groups = runner.run(family.tasks("heldout", tasks, seed=seed))
    trajs = [t for g in groups for t in g.trajectories]
    s = summarize(trajs)
    wins = [sum(is_success(t) for t in g.trajectories) for g in groups]
    return CheckpointReport(
        model=str(model_dir), family=family.name, tasks=len(groups), samples_per_task=k,
        pass_at_1=sum(pass_at_k(k, c, 1) for c in wins) / len(wins),
        pass_at_k=sum(pass_at_k(k, c, k) for c in wins) / len(wins),
        mean_reward=s.mean_reward, tool_use=s.tool_use,
        tool_calls_per_sample=sum(t.metrics["tool_calls"] for t in trajs) / len(trajs),
        tool_errors_per_sample=s.tool_errors, truncated=s.truncated, unjudged=s.unjudged)

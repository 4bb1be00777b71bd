"""Collecting one RL step's groups, with DAPO dynamic sampling.

Dynamic sampling (Yu et al. 2025, DAPO sec. 3.2): a group whose rewards are all equal
has zero group-relative advantage and contributes nothing but compute, so such groups
are dropped and more tasks are sampled until the batch holds `tasks_per_step`
informative groups (or the extra rounds run out). Metrics are computed over every
sampled trajectory, so reported success is not inflated by the filtering.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from tracerl.envs.family import TaskFamily
from tracerl.rollout.runner import RolloutRunner, RolloutStats
from tracerl.train.config import RLConfig
from tracerl.types import Group


@dataclass(frozen=True)
class Collected:
    train: list[Group]
    """Groups that go to the update."""
    sampled: list[Group]
    """Every group sampled this step (for metrics)."""
    stats: RolloutStats
    rounds: int


def informative(group: Group) -> bool:
    judged = {r for r in group.rewards() if r is not None}
    return len(judged) > 1


def _add(total: RolloutStats, more: RolloutStats) -> None:
    for f in fields(RolloutStats):
        setattr(total, f.name, getattr(total, f.name) + getattr(more, f.name))


def collect_groups(runner: RolloutRunner, family: TaskFamily, cfg: RLConfig, seed: int,
                   policy_version: int) -> Collected:
    """Run `tasks_per_step` tasks; with dynamic sampling refill uniform groups."""
    groups = runner.run(family.tasks("train", cfg.tasks_per_step, seed=seed), policy_version)
    stats = runner.stats
    if not cfg.dynamic_sampling:
        return Collected(groups, groups, stats, 1)
    sampled = list(groups)
    train = [g for g in groups if informative(g)]
    rounds = 1
    while len(train) < cfg.tasks_per_step and rounds <= cfg.dynamic_sampling_rounds:
        tasks = family.tasks("train", cfg.tasks_per_step, seed=seed * 7919 + rounds)
        more = runner.run(tasks, policy_version)
        _add(stats, runner.stats)
        sampled += more
        train += [g for g in more if informative(g)]
        rounds += 1
    return Collected(train[: cfg.tasks_per_step], sampled, stats, rounds)

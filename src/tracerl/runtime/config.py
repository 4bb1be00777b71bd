"""The `ray` config section: where the parts of an async run go on a Ray cluster.

No torch and no ray here: `tracerl train --help` reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class RayConfig:
    address: str = ""
    """Ray cluster to join: '' starts a local Ray instance for the run and stops it after;
    'auto' joins the cluster `ray start --head` made on this machine (or the one
    `ray job submit` runs the driver in); ray://host:10001 joins a remote one."""
    rollout_workers: int = 2
    """Rollout worker actors; each holds a copy of the policy and samples continuously."""
    reward_workers: int = 1
    """Reward worker actors scoring finished trajectories (0 = score inside the rollout
    worker). The code family's sandbox pool runs in them."""
    cpus_per_worker: float = 1.0
    """CPUs reserved for each rollout worker (its torch threads)."""
    gpus_per_worker: float = 0.0
    """GPUs reserved for each rollout worker (fractions share one GPU)."""
    learner_cpus: float = 1.0
    """CPUs reserved for the learner actor (its torch threads)."""
    learner_gpus: float = 0.0
    """GPUs reserved for the learner actor (1 with device=cuda puts the update on a GPU)."""
    placement: Literal["PACK", "SPREAD", "STRICT_PACK", "STRICT_SPREAD"] = "PACK"
    """Placement-group strategy of the worker bundles: PACK fills one node first (weight
    sync stays local); SPREAD puts workers on different nodes."""
    namespace: str = "tracerl"
    """Ray namespace of the run's actors."""

    def __post_init__(self) -> None:
        if self.rollout_workers < 1:
            raise ValueError(f"ray.rollout_workers must be >= 1, got {self.rollout_workers}")
        if self.reward_workers < 0:
            raise ValueError(f"ray.reward_workers must be >= 0, got {self.reward_workers}")
        if min(self.cpus_per_worker, self.gpus_per_worker, self.learner_cpus,
               self.learner_gpus) < 0:
            raise ValueError("ray.cpus_per_worker, ray.gpus_per_worker, ray.learner_cpus and "
                             "ray.learner_gpus must be >= 0")

"""The RolloutPool protocol: rollout workers as the async learner sees them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tracerl.rollout.runner import RolloutRunner
from tracerl.rollout.stream import Finished, Job

RunnerFactory = Callable[[int], RolloutRunner]
"""Builds worker `i`'s RolloutRunner (its own policy copy, sampler, envs and reward);
picklable for Ray."""


@dataclass(frozen=True)
class PoolCounters:
    """Cumulative figures over every worker, alive or dead."""

    sample_seconds: float
    sampled_tokens: int
    weight_syncs: int
    workers: int
    """Workers alive now."""


class RolloutPool(Protocol):
    """Rollout workers that sample submitted groups continuously."""

    def submit(self, jobs: list[Job]) -> None:
        """Hand out jobs (the pool picks the workers)."""
        ...

    def sync(self, weights: list[tuple[str, Any]], version: int) -> None:
        """Send every worker the learner's trained weights of policy `version`."""
        ...

    def drain(self, timeout_s: float) -> list[Finished]:
        """Finished groups so far; waits up to `timeout_s` when there are none."""
        ...

    def lost(self) -> list[int]:
        """Indices of submitted jobs lost with a worker since the last call."""
        ...

    def counters(self) -> PoolCounters:
        ...

    def close(self) -> None:
        ...

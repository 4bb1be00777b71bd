"""LocalRollouts: one StreamingRollout on a thread of this process (runtime=local).

The worker samples with its own copy of the policy, so the learner can update its
weights in place while the worker samples; torch releases the GIL inside its kernels,
so on two cores sampling and the update overlap. A worker that crashes is not a lost
worker to route around (there is no other): the error is raised with its traceback.
"""

from __future__ import annotations

from typing import Any

from tracerl.rollout.stream import Finished, Job, StreamingRollout
from tracerl.runtime.base import PoolCounters, RunnerFactory


class LocalRollouts:
    """A RolloutPool of one streaming worker thread."""

    def __init__(self, factory: RunnerFactory, max_groups: int) -> None:
        self.stream = StreamingRollout(factory(0), max_groups)
        self.stream.start()

    def _check(self) -> None:
        if self.stream.error is not None:
            raise RuntimeError(f"the rollout worker thread died:\n{self.stream.error}")

    def submit(self, jobs: list[Job]) -> None:
        self._check()
        self.stream.submit(jobs)

    def sync(self, weights: list[tuple[str, Any]], version: int) -> None:
        self.stream.sync(weights, version)

    def drain(self, timeout_s: float) -> list[Finished]:
        self._check()
        return self.stream.drain(timeout_s)

    def lost(self) -> list[int]:
        return []

    def counters(self) -> PoolCounters:
        stats = self.stream.rollout_stats()
        return PoolCounters(stats.sample_seconds, stats.sampled_tokens,
                            self.stream.stats.weight_syncs, workers=1)

    def close(self) -> None:
        self.stream.stop()

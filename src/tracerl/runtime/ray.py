"""Rollout and reward workers as Ray actors (runtime=ray; pip install 'tracerl[ray]').

The learner is an actor too (tracerl.train.ray_learner): it assigns groups to rollout
worker actors, each a StreamingRollout with its own copy of the policy, and syncs its
weights to all of them after every update through the object store (one `ray.put`,
every worker reads it). Reward worker actors score finished trajectories (the code
family's sandbox pool lives there), so verification does not share the rollout
workers' CPUs.

Every actor has a bundle in one placement group (`placement_bundles`: the learner's
first, then the rollout workers', then the reward workers'; `ray.placement`: PACK keeps
weight sync on one node, SPREAD spreads workers over nodes). A rollout worker that dies is
noticed when its next `drain` fails: the groups assigned to it are reported lost (the
loop counts them and assigns new ones to the survivors), nothing else stops.
"""

from __future__ import annotations

import itertools
import os
from typing import Any

import ray
import torch
from ray.exceptions import RayActorError, RayTaskError
from ray.util.placement_group import PlacementGroup, placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from tracerl.rewards.base import Reward
from tracerl.rollout.stream import Finished, Job, StreamingRollout
from tracerl.runtime.base import PoolCounters, RunnerFactory
from tracerl.runtime.config import RayConfig
from tracerl.types import Trajectory

REWARD_CPUS = 0.25
LEARNER_BUNDLE = 0
READY_TIMEOUT_S = 120.0
COUNTERS_WAIT_S = 1.0


class RewardWorker:
    """Scores trajectories with the family's reward (a Ray actor)."""

    def __init__(self, reward: Reward) -> None:
        self.reward = reward

    def score(self, trajectory: Trajectory) -> float | None:
        return self.reward(trajectory)


class RemoteReward:
    """A Reward that asks the reward workers, round robin (its errors are the reward's)."""

    def __init__(self, workers: list[Any], name: str) -> None:
        self.workers = itertools.cycle(workers)
        self.name = name

    def __call__(self, trajectory: Trajectory) -> float | None:
        return ray.get(next(self.workers).score.remote(trajectory))


class RolloutWorker:
    """A StreamingRollout in an actor; the pool calls submit, sync and drain."""

    def __init__(self, factory: RunnerFactory, worker: int, rewards: list[Any],
                 max_groups: int, threads: int) -> None:
        torch.set_num_threads(threads)
        runner = factory(worker)
        if rewards:
            runner.reward = RemoteReward(rewards, runner.reward.name)
        self.stream = StreamingRollout(runner, max_groups)
        self.stream.start()

    def submit(self, jobs: list[Job]) -> None:
        self.stream.submit(jobs)

    def sync(self, weights: list[tuple[str, Any]], version: int) -> None:
        self.stream.sync(weights, version)

    def drain(self) -> list[Finished]:
        if self.stream.error is not None:
            raise RuntimeError(f"rollout loop died:\n{self.stream.error}")
        return self.stream.drain(0.05)

    def counters(self) -> tuple[float, int, int]:
        stats = self.stream.rollout_stats()
        return stats.sample_seconds, stats.sampled_tokens, self.stream.stats.weight_syncs

    def pid(self) -> int:
        return os.getpid()


def start_ray(config: RayConfig) -> bool:
    """Join `config.address`, or start a local instance with exactly the CPUs the bundles
    ask for; True when this call started Ray (the caller then stops it)."""
    if ray.is_initialized():
        return False
    if config.address:
        ray.init(address=config.address, namespace=config.namespace)
    else:
        cpus = sum(b.get("CPU", 0.0) for b in placement_bundles(config))
        ray.init(num_cpus=max(1, int(cpus + 0.999)), namespace=config.namespace,
                 include_dashboard=False, configure_logging=False)
    return True


def _resources(cpus: float, gpus: float) -> dict[str, float]:
    return {"CPU": cpus, **({"GPU": gpus} if gpus else {})}


def placement_bundles(config: RayConfig) -> list[dict[str, float]]:
    """The run's bundles: the learner (LEARNER_BUNDLE), each rollout worker, each reward
    worker."""
    return ([_resources(config.learner_cpus, config.learner_gpus)]
            + [_resources(config.cpus_per_worker, config.gpus_per_worker)
               for _ in range(config.rollout_workers)]
            + [{"CPU": REWARD_CPUS} for _ in range(config.reward_workers)])


def make_placement(config: RayConfig) -> PlacementGroup:
    """The run's placement group, reserved (raises if the cluster cannot hold it)."""
    group = placement_group(placement_bundles(config), strategy=config.placement)
    ray.get(group.ready(), timeout=READY_TIMEOUT_S)
    return group


def in_bundle(group: PlacementGroup, index: int) -> PlacementGroupSchedulingStrategy:
    return PlacementGroupSchedulingStrategy(placement_group=group,
                                            placement_group_bundle_index=index)


class RayRollouts:
    """A RolloutPool of `config.rollout_workers` actors in `group`'s bundles (see module
    docstring); the caller owns the group and Ray itself."""

    def __init__(self, factory: RunnerFactory, config: RayConfig, max_groups: int,
                 reward: Reward, group: PlacementGroup) -> None:
        self.config = config
        n, k = config.rollout_workers, config.reward_workers
        self.group = group
        self.rewards = [ray.remote(RewardWorker).options(
            num_cpus=REWARD_CPUS, scheduling_strategy=in_bundle(group, 1 + n + i),
        ).remote(reward) for i in range(k)]
        threads = max(1, int(config.cpus_per_worker))
        self.actors = [ray.remote(RolloutWorker).options(
            num_cpus=config.cpus_per_worker, num_gpus=config.gpus_per_worker,
            scheduling_strategy=in_bundle(group, 1 + i), max_restarts=0,
        ).remote(factory, i, self.rewards, max_groups, threads) for i in range(n)]
        self.alive = [True] * n
        self.assigned: list[set[int]] = [set() for _ in range(n)]
        self._drains: dict[int, Any] = {}
        self._lost: list[int] = []
        self._counters: list[tuple[float, int, int]] = [(0.0, 0, 0)] * n

    def _live(self) -> list[int]:
        live = [w for w, ok in enumerate(self.alive) if ok]
        if not live:
            raise RuntimeError("every Ray rollout worker died; see the Ray logs "
                               "(/tmp/ray/session_latest/logs)")
        return live

    def _died(self, worker: int) -> None:
        self.alive[worker] = False
        self._lost += sorted(self.assigned[worker])
        self.assigned[worker].clear()
        self._drains.pop(worker, None)

    def submit(self, jobs: list[Job]) -> None:
        per: dict[int, list[Job]] = {}
        for job in jobs:
            w = min(self._live(), key=lambda i: len(self.assigned[i]))
            self.assigned[w].add(job.index)
            per.setdefault(w, []).append(job)
        for w, batch in per.items():
            self.actors[w].submit.remote(batch)

    def sync(self, weights: list[tuple[str, Any]], version: int) -> None:
        ref = ray.put(weights)  # one copy in the object store, read by every worker
        for w in self._live():
            self.actors[w].sync.remote(ref, version)

    def drain(self, timeout_s: float) -> list[Finished]:
        for w in self._live():
            if w not in self._drains:
                self._drains[w] = self.actors[w].drain.remote()
        refs = {ref: w for w, ref in self._drains.items()}
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=max(timeout_s, 0.0))
        out: list[Finished] = []
        for ref in ready:
            w = refs[ref]
            del self._drains[w]
            try:
                items = ray.get(ref)
            except (RayActorError, RayTaskError):
                self._died(w)
                continue
            for item in items:
                self.assigned[w].discard(item.index)
            out += items
        return out

    def lost(self) -> list[int]:
        out, self._lost = self._lost, []
        return out

    def counters(self) -> PoolCounters:
        """The workers' figures; one still starting (or busy) keeps its last ones."""
        refs = {self.actors[w].counters.remote(): w for w in self._live()}
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=COUNTERS_WAIT_S)
        for ref in ready:
            try:
                self._counters[refs[ref]] = ray.get(ref)
            except (RayActorError, RayTaskError):
                self._died(refs[ref])
        return PoolCounters(sum(c[0] for c in self._counters),
                            sum(c[1] for c in self._counters),
                            sum(c[2] for c in self._counters), workers=sum(self.alive))

    def workers(self) -> list[tuple[Any, int]]:
        """Each live rollout worker actor and how many groups it holds now."""
        return [(self.actors[w], len(self.assigned[w])) for w in self._live()]

    def close(self) -> None:
        for actor in self.actors + self.rewards:
            ray.kill(actor)

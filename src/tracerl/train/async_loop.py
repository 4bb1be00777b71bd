"""Async RL: rollout workers sample continuously while the learner updates.

The learner's side of `rl.mode=async` (in this process, or with runtime=ray in the
learner actor of train/ray_learner.py). Rollout workers (a RolloutPool: a child process,
a thread, or Ray actors) sample the groups this loop assigns, each with its own copy of
the policy; finished groups wait in a bounded GroupBuffer; every step the learner takes
the `rl.tasks_per_step` oldest fresh groups, runs the one RL update (`RLStep.update`,
the same as sync), bumps the policy version and syncs its weights to the workers. An
episode in flight continues with the new weights (each Turn records its version).

Bounds and bookkeeping:
- At most `rl.buffer_capacity` groups are in flight or buffered: new groups are
  assigned only under that bound, so memory is bounded and a slow learner slows
  sampling instead of piling up stale trajectories.
- A group whose first turn is more than `rl.max_staleness` versions older than the
  learner is dropped and counted (`stale_groups`); `rl.tis_cap` corrects what is kept
  with truncated importance sampling against the learner's own (proximal) policy.
- Group k of the run's task stream is task k % tasks_per_step of sync step
  k // tasks_per_step's tasks, so async and sync runs of one seed see the same tasks.
- Every index handed out is trained, dropped stale, lost with a dead worker, buffered
  or in flight; a checkpoint records all five (AsyncState plus the buffered groups), so
  a resumed run keeps its version and staleness state, re-samples what was in flight,
  and neither repeats nor skips a group. A step cut short by Ctrl-C after it took its
  groups (in the update) hands them back to be sampled again.
- The room the learner takes from the buffer is handed out again before the update, so
  the workers sample through it (the update is over half an async step; groups assigned
  after it arrived too late and the learner waited on them). Those groups' first turns
  are one version older.
"""

from __future__ import annotations

import copy
import json
import multiprocessing as mp
import pickle
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from tracerl.envs.family import TaskFamily
from tracerl.policy.model import Policy
from tracerl.policy.weights import trained_weights
from tracerl.rollout.buffer import GroupBuffer
from tracerl.rollout.runner import RolloutRunner, RolloutStats
from tracerl.rollout.stream import Finished, Job, group_version
from tracerl.runtime.base import RolloutPool
from tracerl.runtime.local import LocalRollouts, ProcessRollouts
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError
from tracerl.train.metrics import RLStepMetrics, StepTimes
from tracerl.train.rl_step import RLStep
from tracerl.train.runner import build_runner, build_sampler, build_task_family
from tracerl.train.step import StepResult, step_seed
from tracerl.types import Group, Status, Task

STATE_FILE = "async_state.json"
BUFFER_FILE = "async_buffer.pkl"
POLL_S = 0.05


@dataclass
class AsyncState:
    """What an async run keeps across a resume (one file in every checkpoint)."""

    version: int = 0
    """Policy version: updates applied so far."""
    next_index: int = 0
    """The next index of the task stream never handed out."""
    requeue: list[int] = field(default_factory=list)
    """Indices handed out but unfinished at the checkpoint: handed out again first."""
    trained: list[int] = field(default_factory=list)
    stale: list[int] = field(default_factory=list)
    """Groups dropped for exceeding rl.max_staleness."""
    lost: list[int] = field(default_factory=list)
    """Groups lost with a rollout worker that died."""


@dataclass(frozen=True)
class WorkerRunner:
    """Builds a rollout worker's runner: its own copy of the policy, seeded per worker
    (a RunnerFactory; pickled to Ray actors, which build the family from the config:
    its guard holds locks that do not pickle)."""

    config: TrainConfig
    policy: Policy
    family: TaskFamily | None = None
    """None: `build_task_family(config)` in the worker."""

    def __call__(self, worker: int) -> RolloutRunner:
        family = self.family
        if family is None:
            family = build_task_family(self.config, self.policy)
        policy = copy.copy(self.policy)
        policy.model = copy.deepcopy(self.policy.model)
        policy.model.eval()
        sampler = build_sampler(self.config, policy, seed=self.config.seed * 1009 + worker + 1)
        return build_runner(self.config, policy, family, sampler)


def make_pool(config: TrainConfig, factory: WorkerRunner, family: TaskFamily,
              placement: Any = None) -> RolloutPool:
    """runtime=local: a worker process (a thread when the factory cannot be pickled);
    runtime=ray: actors in the run's placement group (the learner actor passes it)."""
    capacity = config.rl.buffer_capacity
    if config.runtime == "ray":
        if placement is None:
            raise ValueError("runtime=ray: the rollout pool needs the run's placement group "
                             "(the learner actor, tracerl.train.ray_learner, makes it)")
        try:  # ray is an optional extra: imported only when the run asks for it
            from tracerl.runtime.ray import RayRollouts
        except ModuleNotFoundError as e:
            raise ConfigError("runtime=ray needs Ray: pip install 'tracerl[ray]'") from e

        return RayRollouts(factory, config.ray, capacity, family.reward, placement)
    if mp.current_process().daemon:  # a daemonic process may not start children
        return LocalRollouts(factory, capacity)
    if factory.family is not None:
        try:
            pickle.dumps(factory.family)
        except Exception:  # a family from Python that holds locks or lambdas: a thread
            return LocalRollouts(factory, capacity)
    return ProcessRollouts(factory, capacity)


def step_stats(groups: list[Group], sample_seconds: float, tokens: int) -> RolloutStats:
    """The RolloutStats of one async step's groups (counters read off the trajectories)."""
    trajs = [t for g in groups for t in g.trajectories]
    reward_errors = sum(1 for t in trajs if (t.error or "").startswith("reward "))
    return RolloutStats(
        trajectories=len(trajs),
        env_errors=sum(t.status is Status.ERROR for t in trajs),
        reward_errors=reward_errors,
        unjudged=sum(t.outcome_reward is None for t in trajs),
        sample_seconds=sample_seconds, sampled_tokens=tokens,
        errors=[t.error for t in trajs if t.error])


class AsyncRL:
    """The async RL loop of one stage: `step(step)` is one update (see module docstring)."""

    def __init__(self, learner: RLStep, optimizer: torch.optim.Optimizer, family: TaskFamily,
                 pool: RolloutPool, state: AsyncState | None = None,
                 buffered: list[Finished] | None = None) -> None:
        self.learner = learner
        self.optimizer = optimizer
        self.family = family
        self.cfg = learner.cfg
        self.pool = pool
        self.state = state or AsyncState()
        self.buffer = GroupBuffer(self.cfg.rl.buffer_capacity)
        for item in buffered or []:
            self.buffer.put(item)
        self.in_flight: set[int] = set()
        self._taken: list[int] = []
        """The groups of the step being trained, until they count as trained."""
        self._tasks: tuple[int, list[Task]] | None = None
        self._counters = pool.counters()
        self._sync()

    # -- checkpoints -----------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Write the state (in-flight groups, and those of a step cut short before they
        were trained, become `requeue`) and the buffered groups."""
        trained = set(self.state.trained)
        untrained = {i for i in self._taken if i not in trained}
        state = replace_requeue(self.state,
                                sorted(self.in_flight | untrained | set(self.state.requeue)))
        (directory / STATE_FILE).write_text(json.dumps(asdict(state)))
        (directory / BUFFER_FILE).write_bytes(pickle.dumps(self.buffer.items()))

    @staticmethod
    def load(directory: Path) -> tuple[AsyncState | None, list[Finished]]:
        """A checkpoint's async state and buffered groups (None, [] if it has none)."""
        path = directory / STATE_FILE
        if not path.is_file():
            return None, []
        state = AsyncState(**json.loads(path.read_text()))
        buffered = pickle.loads((directory / BUFFER_FILE).read_bytes())
        return state, buffered

    def pull(self) -> None:
        """Nothing to fetch: this loop trains the caller's own policy and optimizer (the
        Ray learner actor's stand-in, train/ray_learner.py, fetches them)."""

    def close(self) -> None:
        self.pool.close()

    # -- the task stream -------------------------------------------------------------------
    def task(self, index: int) -> Task:
        """Group `index` of the stream: the same task a sync run samples for it."""
        n = self.cfg.rl.tasks_per_step
        block = index // n
        if self._tasks is None or self._tasks[0] != block:
            seed = step_seed(self.cfg.seed, block)
            self._tasks = (block, self.family.tasks("train", n, seed=seed))
        return self._tasks[1][index % n]

    def _top_up(self) -> None:
        room = self.buffer.capacity - len(self.buffer) - len(self.in_flight)
        indices: list[int] = []
        while room > 0 and self.state.requeue:
            indices.append(self.state.requeue.pop(0))
            room -= 1
        while room > 0:
            indices.append(self.state.next_index)
            self.state.next_index += 1
            room -= 1
        if indices:
            self.in_flight.update(indices)
            self.pool.submit([Job(i, self.task(i)) for i in indices])

    def _receive(self, timeout_s: float) -> None:
        for index in self.pool.lost():
            if index in self.in_flight:
                self.in_flight.discard(index)
                self.state.lost.append(index)
        for item in self.pool.drain(timeout_s):
            if item.index in self.in_flight:  # a late answer of a lost job is not kept
                self.in_flight.discard(item.index)
                self.buffer.put(item)
        for item in self.buffer.drop_stale(self.state.version, self.cfg.rl.max_staleness):
            self.state.stale.append(item.index)

    def _sync(self) -> float:
        t0 = time.perf_counter()
        self.pool.sync(trained_weights(self.learner.policy.model), self.state.version)
        return time.perf_counter() - t0

    # -- one step ------------------------------------------------------------------------
    def _collect(self) -> list[Finished]:
        need = self.cfg.rl.tasks_per_step
        self._top_up()
        self._receive(0.0)
        while len(self.buffer) < need:
            self._top_up()
            self._receive(POLL_S)
        return self.buffer.take(need)

    def step(self, step: int, trace_failures: int | None = None) -> StepResult:
        """Wait for a batch of fresh groups, update once, sync the weights."""
        t0 = time.perf_counter()
        items = self._collect()
        self._taken = [f.index for f in items]
        wait_s = time.perf_counter() - t0
        self._top_up()  # the taken groups' room: the workers sample on during the update
        groups = [f.group for f in items]
        staleness = [self.state.version - group_version(g) for g in groups]
        buffered = len(self.buffer)
        t0 = time.perf_counter()
        update = self.learner.update(groups, self.optimizer, step,
                                     torch.Generator().manual_seed(step_seed(self.cfg.seed, step)))
        update_s = time.perf_counter() - t0
        self.state.trained += [f.index for f in items]
        self.state.version += 1
        self._taken = []
        sync_s = self._sync()
        self._top_up()
        return StepResult(self._metrics(groups, update, wait_s, update_s, trace_failures, {
            "policy_version": float(self.state.version),
            "staleness_mean": sum(staleness) / len(staleness),
            "staleness_max": float(max(staleness)),
            "stale_groups": float(len(self.state.stale)),
            "lost_groups": float(len(self.state.lost)),
            "buffer_groups": float(buffered),
            "weight_sync_s": sync_s,
            "rollout_workers": float(self.pool.counters().workers),
        }), [t for g in groups for t in g.trajectories])

    def _metrics(self, groups: list[Group], update, wait_s: float, update_s: float,
                 trace_failures: int | None, extra: dict[str, float]) -> RLStepMetrics:
        now = self.pool.counters()
        sample_s = now.sample_seconds - self._counters.sample_seconds
        tokens = now.sampled_tokens - self._counters.sampled_tokens
        self._counters = now
        stats = step_stats(groups, sample_s, tokens)
        trained = sum(len(t.token_ids()) for g in groups for t in g.trajectories
                      if t.advantages is not None)
        times = StepTimes(wait_s, update_s, sample_tok_s=tokens / max(sample_s, 1e-9),
                          update_tok_s=trained / max(update_s, 1e-9), sample_s=sample_s)
        trajs = [t for g in groups for t in g.trajectories]
        return RLStepMetrics.of(trajs, stats, times, update, trace_failures=trace_failures,
                                extra=extra)


def replace_requeue(state: AsyncState, requeue: list[int]) -> AsyncState:
    return AsyncState(**{**asdict(state), "requeue": requeue})


def start_async(learner: RLStep, optimizer: torch.optim.Optimizer, family: TaskFamily,
                config: TrainConfig, checkpoint: Path | None,
                rebuild_family: bool = True, placement: Any = None) -> AsyncRL:
    """The async loop of an RL stage, resumed from `checkpoint`'s async state if any.

    With `rebuild_family` the workers build the family from the config (its guard holds
    locks that do not pickle); otherwise (a family passed from Python) they are given it.
    """
    state, buffered = AsyncRL.load(checkpoint) if checkpoint is not None else (None, [])
    factory = WorkerRunner(config, learner.policy, None if rebuild_family else family)
    pool = make_pool(config, factory, family, placement)
    return AsyncRL(learner, optimizer, family, pool, state, buffered)

"""Continuous rollouts for async training: many groups in flight, no batch barrier.

`RolloutRunner.run` samples a batch of groups in lock step: every round waits for the
slowest env step, and the next batch waits for the update. A StreamingRollout keeps up
to `max_groups` groups in flight and, every round, samples the next action of each
episode that is not waiting on its env; an env step (a tool call that takes 200 ms)
runs as its own asyncio task while the others sample on. A group is finished (reward,
counters) once its last episode ends and is handed out at once.

It runs on its own thread with its own event loop (`start`), or on the caller's
(`run_forever`: a Ray actor's thread). The learner talks to it from another thread
through three thread-safe calls: `submit` jobs, `sync` weights, `drain` finished groups.
A weight sync is applied between two sampler calls, never during one, so an episode in
flight samples its next turn with the new weights, and each Turn records the policy
version that sampled it (partial rollouts, as in AReaL).

The sampler runs on one persistent thread of its own (the runner samples on the loop's
thread): here env steps are in flight while it samples, and a sampler call that held
the loop for seconds would fire their timeouts late, turning slow sampling into
spurious tool timeouts. One thread for the stream's life also keeps a single OpenMP
team (a fresh thread per call cost 2-3x, docs/benchmarks.md). Episodes whose tool calls
finish during a sampler call join the next one.
"""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from tracerl.policy.sampling import WeightSync
from tracerl.rollout.runner import RolloutRunner, RolloutStats, _Episode
from tracerl.types import Group, Task

IDLE_POLL_S = 0.002
"""How often an idle stream looks for new jobs or weights."""
SPLIT_KEEP = 0.8
"""length_buckets splits a sampler call in two where that pads to under this share of
the tokens one call would. Measured with the tiny policy on calc (first turns at 36
tokens, turns after a tool result at 125; thread CPU time): 20 first turns + 2 after a
tool cost 0.63 of one call as two calls, 8 + 8 0.70, 4 + 16 1.02 (a share of 0.86: one
call), 2 + 20 1.16 (0.94)."""
KEEP_ERRORS = 100
"""Tracebacks kept (newest) by a stream that runs for the whole stage; every trajectory
still carries its own error."""


@dataclass(frozen=True)
class Job:
    """One group to sample: `index` is its place in the run's task stream."""

    index: int
    task: Task


@dataclass(frozen=True)
class Finished:
    """A finished group and the index of the job it answers."""

    index: int
    group: Group


@dataclass
class StreamStats:
    """Counters since the stream started (read from other threads: approximate)."""

    groups: int = 0
    failed_groups: int = 0
    """Groups whose envs could not even be reset (handed out empty, counted)."""
    weight_syncs: int = 0
    sample_calls: int = 0
    sampled_rows: int = 0
    """Episodes sampled over all sampler calls (the mean batch is rows / calls)."""
    errors: list[str] = field(default_factory=list)


@dataclass
class _Live:
    job: Job
    episodes: list[_Episode]


class StreamingRollout:
    """Samples submitted groups continuously with `runner`'s sampler, envs and reward.

    The runner's sampler must accept weight syncs (tracerl.policy.sampling.WeightSync).
    """

    def __init__(self, runner: RolloutRunner, max_groups: int,
                 on_finished: Callable[[Finished], None] | None = None) -> None:
        if not isinstance(runner.sampler, WeightSync):
            raise TypeError(f"{type(runner.sampler).__name__} has no load_weights(): async "
                            "rollouts need a sampler the learner can sync weights into")
        if max_groups < 1:
            raise ValueError(f"max_groups must be >= 1, got {max_groups}")
        self.runner = runner
        self.max_groups = max_groups
        self.version = 0
        self.stats = StreamStats()
        self.error: str | None = None
        """Set when the loop died (the traceback); the stream then hands out nothing."""
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[Finished] = queue.SimpleQueue()
        self._finish: Callable[[Finished], None] = on_finished or self._done.put
        """Where a finished group goes: `drain` hands it out, or `on_finished` is called
        with it on the loop's thread (a worker process's outbox: nothing polls for it)."""
        self._lock = threading.Lock()
        self._weights: tuple[list[tuple[str, Any]], int] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sampler = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tracerl-sampler")

    # -- the learner's side (any thread) -------------------------------------------------
    def submit(self, jobs: Iterable[Job]) -> None:
        for job in jobs:
            self._jobs.put(job)

    def sync(self, weights: list[tuple[str, Any]], version: int) -> None:
        """Load these weights before the next sampler call (a newer sync replaces one
        not yet applied)."""
        with self._lock:
            self._weights = (weights, version)

    def drain(self, timeout_s: float = 0.0) -> list[Finished]:
        """Finished groups so far; waits up to `timeout_s` for the first one."""
        out: list[Finished] = []
        try:
            out.append(self._done.get(timeout=timeout_s) if timeout_s > 0
                       else self._done.get_nowait())
            while True:
                out.append(self._done.get_nowait())
        except queue.Empty:
            return out

    def rollout_stats(self) -> RolloutStats:
        """The runner's cumulative counters (sampler time, sampled tokens, errors)."""
        return self.runner.stats

    def start(self) -> None:
        """Run the loop on a daemon thread."""
        self._thread = threading.Thread(target=self.run_forever, name="tracerl-rollout",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def run_forever(self) -> None:
        """Run the loop on this thread until `stop` (a crash is kept in `error`)."""
        try:
            asyncio.run(self._loop())
        except Exception:
            self.error = traceback.format_exc()
        finally:
            self._sampler.shutdown(wait=False)

    # -- the loop (its own thread) -------------------------------------------------------
    def _apply_weights(self) -> None:
        with self._lock:
            pending, self._weights = self._weights, None
        if pending is not None:
            weights, version = pending
            self.runner.sampler.load_weights(weights)  # type: ignore[attr-defined]
            self.version = version
            self.stats.weight_syncs += 1

    async def _admit(self, room: int) -> list[_Live]:
        jobs: list[Job] = []
        while len(jobs) < room:
            try:
                jobs.append(self._jobs.get_nowait())
            except queue.Empty:
                break
        started = await asyncio.gather(*(self._start(job) for job in jobs))
        return [g for g in started if g is not None]

    async def _start(self, job: Job) -> _Live | None:
        size = self.runner.config.group_size
        try:
            episodes = await asyncio.gather(*(
                self.runner._start(job.task, job.index, s, self.version) for s in range(size)))
        except Exception:  # contained: the group is handed out empty and counted
            self.stats.failed_groups += 1
            self.stats.errors.append(traceback.format_exc())
            self._finish(Finished(job.index, Group(job.task, [])))
            return None
        return _Live(job, list(episodes))

    async def _loop(self) -> None:
        live: list[_Live] = []
        steps: set[asyncio.Task[None]] = set()
        busy: set[int] = set()  # id() of episodes whose env step is in flight
        cfg = self.runner.config
        while not self._stop.is_set():
            self._apply_weights()
            live += await self._admit(self.max_groups - len(live))
            ready = [ep for g in live for ep in g.episodes if ep.live and id(ep) not in busy]
            if ready:
                for ep in ready:
                    ep.version = self.version
                for part in length_buckets([len(ep.context) for ep in ready]):
                    batch = [ready[i] for i in part]
                    samples = await asyncio.get_running_loop().run_in_executor(
                        self._sampler, self.runner._sample, batch, cfg)
                    self.stats.sample_calls += 1
                    self.stats.sampled_rows += len(batch)
                    for ep, sample in zip(batch, samples, strict=True):
                        busy.add(id(ep))
                        task = asyncio.create_task(self.runner._step(ep, sample, cfg))
                        task.add_done_callback(functools.partial(_release, busy, id(ep)))
                        task.add_done_callback(steps.discard)
                        steps.add(task)
                    await asyncio.sleep(0)  # let the new env steps start their tool calls
            elif steps:
                await asyncio.wait(steps, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
            else:
                await asyncio.sleep(IDLE_POLL_S)
            live = await self._hand_out(live, busy)
        for task in steps:
            task.cancel()
        await asyncio.gather(*steps, return_exceptions=True)
        await asyncio.gather(*(ep.env.close() for g in live for ep in g.episodes),
                             return_exceptions=True)

    async def _hand_out(self, live: list[_Live], busy: set[int]) -> list[_Live]:
        """Finish (reward, counters) and hand out every group whose episodes all ended."""
        keep: list[_Live] = []
        for g in live:
            if any(ep.live or id(ep) in busy for ep in g.episodes):
                keep.append(g)
                continue
            await asyncio.gather(*(self.runner._close(ep) for ep in g.episodes))
            self.runner._judge([ep.trajectory for ep in g.episodes])  # one batch per group
            self.runner.stats.trajectories += len(g.episodes)
            self._finish(Finished(g.job.index, Group(
                g.job.task, [ep.trajectory for ep in g.episodes])))
            self.stats.groups += 1
        del self.runner.stats.errors[:-KEEP_ERRORS], self.stats.errors[:-KEEP_ERRORS]
        return keep


def length_buckets(lengths: list[int], keep: float = SPLIT_KEEP) -> list[list[int]]:
    """The rows of one sampler call, as one or two calls: longest contexts first.

    A batch is left-padded to its longest context, so a call that mixes episodes on
    their first turn (short) with episodes past a tool call (a tool result longer) runs
    every short row at the long length, prefill and attention alike; a synchronous
    round never mixes them. Split in two where the padded length summed over the rows
    of the two calls is under `keep` of the one call's; otherwise one call, as a second
    call costs a decoding loop of its own."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    n = len(order)
    whole = n * lengths[order[0]] if n else 0
    best, cut = whole, 0
    for k in range(1, n):  # rows order[:k] in the long call, the rest in the short one
        cost = k * lengths[order[0]] + (n - k) * lengths[order[k]]
        if cost < best:
            best, cut = cost, k
    if cut == 0 or best >= keep * whole:
        return [sorted(order)] if n else []
    return [sorted(order[:cut]), sorted(order[cut:])]


def _release(busy: set[int], key: int, _: asyncio.Task[None]) -> None:
    busy.discard(key)


def group_version(group: Group) -> int:
    """The oldest policy version that sampled any turn of the group (its first turns)."""
    versions = [t.policy_version for t in group.trajectories]
    return min(versions) if versions else 0


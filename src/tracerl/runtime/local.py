"""One rollout worker on this machine (runtime=local): a child process, or a thread.

The worker samples with its own copy of the policy, so the learner can update its
weights in place while the worker samples. `ProcessRollouts` (the default) runs it in a
child process; `LocalRollouts` on a thread of the learner's process, for a task family
that cannot be pickled or rebuilt from the config (it shares the GIL: see
ProcessRollouts). A worker that crashes is not a lost worker to route around (there is
no other): the error is raised with its traceback.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import time
from typing import Any

from tracerl.rollout.stream import Finished, Job, StreamingRollout
from tracerl.runtime.base import PoolCounters, RunnerFactory

COUNTERS_EVERY_S = 0.5
"""How often the worker process sends its counters (and looks at its parent)."""


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


def _serve(factory: RunnerFactory, max_groups: int, threads: int, inbox: Any,
           outbox: Any, parent: int) -> None:
    """The worker process: a StreamingRollout, fed through one queue; its finished groups
    go into the other as they finish (from the stream's thread). This thread sleeps on
    the inbox: it used to wake every 5 ms to forward groups, and each wake took the GIL
    from the sampler thread. It stops with the learner, even one killed without a word
    (SIGKILL). A terminal's Ctrl-C reaches it with the learner's whole process group: it
    ignores it, the learner handles it and stops this worker (no second traceback)."""
    import torch

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(threads)
    stream = StreamingRollout(factory(0), max_groups,
                              on_finished=lambda item: outbox.put(("group", item)))
    stream.start()
    last = 0.0
    while True:
        try:
            kind, payload = inbox.get(timeout=COUNTERS_EVERY_S)
        except queue.Empty:
            kind, payload = "", None
        if kind == "stop" or os.getppid() != parent:
            break
        if kind == "jobs":
            stream.submit(payload)
        elif kind == "sync":
            stream.sync(*payload)
        if stream.error is not None:
            outbox.put(("error", stream.error))
            break
        if time.monotonic() - last > COUNTERS_EVERY_S:
            last = time.monotonic()
            stats = stream.rollout_stats()
            outbox.put(("counters", (stats.sample_seconds, stats.sampled_tokens,
                                     stream.stats.weight_syncs)))
    stream.stop()


class ProcessRollouts:
    """A RolloutPool of one streaming worker in a child process (runtime=local).

    A thread in the learner's process shares its GIL: with a small model, whose update
    and sampling are mostly Python dispatch, the two then take turns instead of
    overlapping (measured under load: the update ran 2.4-3.8x slower beside a sampling
    thread). A process samples in parallel for real; jobs, weights and
    finished groups cross by pickling through two queues.
    """

    def __init__(self, factory: RunnerFactory, max_groups: int, threads: int = 1) -> None:
        ctx = mp.get_context("spawn")
        self._inbox, self._outbox = ctx.Queue(), ctx.Queue()
        self.process = ctx.Process(target=_serve, name="tracerl-rollout", daemon=True,
                                   args=(factory, max_groups, threads, self._inbox,
                                         self._outbox, os.getpid()))
        self.process.start()
        self._counters = (0.0, 0, 0)

    def submit(self, jobs: list[Job]) -> None:
        self._inbox.put(("jobs", jobs))

    def sync(self, weights: list[tuple[str, Any]], version: int) -> None:
        self._inbox.put(("sync", (weights, version)))

    def drain(self, timeout_s: float) -> list[Finished]:
        out: list[Finished] = []
        wait = timeout_s
        while True:
            try:
                kind, payload = self._outbox.get(timeout=wait) if wait > 0 \
                    else self._outbox.get_nowait()
            except queue.Empty:
                break
            wait = 0.0
            if kind == "group":
                out.append(payload)
            elif kind == "counters":
                self._counters = payload
            else:
                raise RuntimeError(f"the rollout worker process died:\n{payload}")
        if not out and not self.process.is_alive():
            raise RuntimeError(f"the rollout worker process exited "
                               f"(code {self.process.exitcode})")
        return out

    def lost(self) -> list[int]:
        return []

    def counters(self) -> PoolCounters:
        seconds, tokens, syncs = self._counters
        return PoolCounters(seconds, tokens, syncs, workers=int(self.process.is_alive()))

    def close(self) -> None:
        if self.process.is_alive():
            self._inbox.put(("stop", None))
            self.process.join(10)
        if self.process.is_alive():
            self.process.terminate()

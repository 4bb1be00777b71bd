"""Concurrent requests sampled together: one Sampler call for every waiting request.

Requests arrive on the server's event loop; the sampler is blocking torch code. A single
worker thread owns the sampler. While it runs one batch, new requests queue; when it is
free it waits `window_s` (5 ms) for stragglers, then takes every queued request whose
sampling settings agree (temperature, top-p, stops), up to `max_rows` contexts, and
samples them in one `generate` call with a budget per row
(tracerl.policy.sampling.Sampler). With 64 clients that turns 64 sequential
decodes into a few batched ones (docs/benchmarks.md, "Serving").

`lock` is held while the sampler runs; a learner takes it to update the weights
between batches, so a batch never sees half-updated weights, and every sample records
the policy version it was drawn from.

Streaming: when the sampler accepts `on_token(row, id, logprob)` (the transformers one
does), each token is passed to the request's callback as it is drawn.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from tracerl.policy.sampling import Sample, Sampler, SamplingParams

OnToken = Callable[[int, int, float], None]
"""`(choice, token id, logprob)` for one request."""


@dataclass
class _Job:
    contexts: list[list[int]]
    params: SamplingParams
    budget: int
    future: asyncio.Future[tuple[list[Sample], int]]
    on_token: OnToken | None

    @property
    def key(self) -> tuple[object, ...]:
        p = self.params
        return (p.temperature, p.top_p, p.stop_ids, p.stop_strings)


@dataclass
class BatchStats:
    sampler_calls: int = 0
    rows: int = 0
    """Contexts sampled (a request with n choices is n rows)."""
    tokens: int = 0
    sample_seconds: float = 0.0
    max_rows: int = 0
    errors: list[str] = field(default_factory=list)


class Batcher:
    """Queues requests from the event loop and samples them in batches on one thread."""

    def __init__(self, sampler: Sampler, max_rows: int = 64,
                 version: Callable[[], int] = lambda: 0, window_s: float = 0.005) -> None:
        if max_rows < 1 or window_s < 0:
            raise ValueError(f"max_rows must be >= 1 and window_s >= 0, got {max_rows}, "
                             f"{window_s}")
        self.sampler = sampler
        self.max_rows = max_rows
        self.window_s = window_s
        self.version = version
        self.lock = threading.Lock()
        self.stats = BatchStats()
        self._streams = "on_token" in inspect.signature(sampler.generate).parameters
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="tracerl-sampler")
        self._queue: asyncio.Queue[_Job] | None = None
        self._task: asyncio.Task[None] | None = None

    async def generate(self, context: list[int], params: SamplingParams, n: int = 1,
                       on_token: OnToken | None = None) -> tuple[list[Sample], int]:
        """`n` samples continuing `context` (budget `params.max_new_tokens`), and the
        policy version they were drawn from."""
        if self._queue is None or self._task is None or self._task.done():
            self._queue = asyncio.Queue()
            self._task = asyncio.get_running_loop().create_task(self._run())
        future: asyncio.Future[tuple[list[Sample], int]] = \
            asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Job([context] * n, params, params.max_new_tokens, future,
                                    on_token))
        return await future

    async def _run(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        while True:
            jobs = [await self._queue.get()]
            # Clients whose previous replies went out together send their next requests
            # a few ms apart (HTTP, parsing, rendering); a short window catches them.
            await asyncio.sleep(self.window_s if self.max_rows > 1 else 0)
            while not self._queue.empty():
                jobs.append(self._queue.get_nowait())
            for batch in self._batches(jobs):
                try:
                    results = await loop.run_in_executor(self._pool, self._sample, batch)
                except Exception as e:  # contained: these requests fail, the server goes on
                    self.stats.errors.append(f"{type(e).__name__}: {e}")
                    for job in batch:
                        if not job.future.done():
                            job.future.set_exception(e)
                    continue
                for job, result in zip(batch, results, strict=True):
                    if not job.future.done():  # a cancelled request is simply dropped
                        job.future.set_result(result)

    def _batches(self, jobs: list[_Job]) -> list[list[_Job]]:
        """Jobs of one sampling key together, at most `max_rows` contexts per batch
        (a job larger than that gets a batch of its own)."""
        by_key: dict[tuple[object, ...], list[list[_Job]]] = {}
        for job in jobs:
            batches = by_key.setdefault(job.key, [[]])
            rows = sum(len(j.contexts) for j in batches[-1])
            if batches[-1] and rows + len(job.contexts) > self.max_rows:
                batches.append([])
            batches[-1].append(job)
        return [b for batches in by_key.values() for b in batches]

    def _sample(self, jobs: list[_Job]) -> list[tuple[list[Sample], int]]:
        contexts = [c for j in jobs for c in j.contexts]
        budgets = [j.budget for j in jobs for _ in j.contexts]
        owner = [(j, i) for j in jobs for i in range(len(j.contexts))]
        params = replace(jobs[0].params, max_new_tokens=max(budgets))
        kwargs = {}
        if self._streams and any(j.on_token for j in jobs):
            def on_token(row: int, token: int, logprob: float) -> None:
                job, choice = owner[row]
                if job.on_token is not None:
                    job.on_token(choice, token, logprob)
            kwargs["on_token"] = on_token
        with self.lock:
            version = self.version()
            t0 = time.perf_counter()
            samples = self.sampler.generate(contexts, params, budgets, **kwargs)
            self.stats.sample_seconds += time.perf_counter() - t0
        self.stats.sampler_calls += 1
        self.stats.rows += len(contexts)
        self.stats.max_rows = max(self.stats.max_rows, len(contexts))
        self.stats.tokens += sum(len(s.ids) for s in samples)
        out, at = [], 0
        for j in jobs:
            out.append((samples[at:at + len(j.contexts)], version))
            at += len(j.contexts)
        return out

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)

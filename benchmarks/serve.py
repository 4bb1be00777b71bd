"""Load on `tracerl serve`: 64 concurrent clients, batched against one-request-per-call.

Starts `tracerl serve tiny` twice as a separate process (so the clients do not share its
interpreter), once with `--max-batch 64` and once with `--max-batch 1` (every request
its own sampler call: the baseline), and sends the same load to each: `--clients`
concurrent clients, each sending `--requests` chat completions one after the other
(`--max-tokens` each, temperature 1). A second phase streams, and a few clients drop
their stream after the first chunk; every other request must still succeed.

Prints requests/s, sampled tokens/s, latency p50/p95, sampler calls and rows per call
for both servers, and the batched/unbatched throughput ratio (same run, same machine).

    python benchmarks/serve.py
    python benchmarks/serve.py --clients 64 --requests 4 --max-tokens 32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import httpx

from tracerl.serve.server import bind


@dataclass(frozen=True)
class Load:
    seconds: float
    requests: int
    errors: int
    tokens: int
    p50: float
    p95: float
    sampler_calls: int
    rows: int
    dropped_streams: int = 0

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    def line(self, name: str) -> str:
        return (f"{name:>10}: {self.requests} requests in {self.seconds:6.1f} s  "
                f"{self.rps:6.2f} req/s  {self.tokens / self.seconds:7.1f} tok/s  "
                f"p50 {self.p50:5.2f} s  p95 {self.p95:5.2f} s  sampler calls "
                f"{self.sampler_calls} ({self.rows / max(1, self.sampler_calls):.1f} rows each)"
                f"  errors {self.errors}" + (f"  dropped streams {self.dropped_streams}"
                                             if self.dropped_streams else ""))


def start(port: int, max_batch: int, seed: int) -> subprocess.Popen[str]:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.Popen(
        [sys.executable, "-m", "tracerl.cli", "serve", "tiny", f"seed={seed}", "threads=1",
         "--port", str(port), "--max-batch", str(max_batch)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)


async def wait_ready(url: str, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient() as c:
        while True:
            try:
                if (await c.get(f"{url}/models")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not come up")
            await asyncio.sleep(0.2)


def body(i: int, j: int, max_tokens: int, stream: bool = False) -> dict:
    return {"model": "tiny", "max_tokens": max_tokens, "temperature": 1.0, "stream": stream,
            "messages": [{"role": "user", "content": f"Compute ({100 + i}*{10 + j})."}],
            "episode_id": f"bench-{i}-{j}"}


async def closed_loop(url: str, clients: int, requests: int, max_tokens: int) -> Load:
    latencies: list[float] = []
    errors = tokens = 0

    async def client(c: httpx.AsyncClient, i: int) -> None:
        nonlocal errors, tokens
        for j in range(requests):
            t0 = time.perf_counter()
            r = await c.post(f"{url}/chat/completions", json=body(i, j, max_tokens))
            latencies.append(time.perf_counter() - t0)
            if r.status_code != 200:
                errors += 1
            else:
                tokens += r.json()["usage"]["completion_tokens"]

    limits = httpx.Limits(max_connections=clients + 8)
    async with httpx.AsyncClient(timeout=600, limits=limits) as c:
        before = (await c.get(f"{url}/stats")).json()["batcher"]
        t0 = time.perf_counter()
        await asyncio.gather(*(client(c, i) for i in range(clients)))
        seconds = time.perf_counter() - t0
        after = (await c.get(f"{url}/stats")).json()["batcher"]
    q = statistics.quantiles(latencies, n=20)
    return Load(seconds, len(latencies), errors, tokens, statistics.median(latencies), q[18],
                after["sampler_calls"] - before["sampler_calls"], after["rows"] - before["rows"])


async def streams(url: str, clients: int, max_tokens: int, drop_every: int) -> Load:
    """Each client streams once; every `drop_every`-th one leaves after its first chunk."""
    latencies: list[float] = []
    errors = dropped = tokens = 0

    async def client(c: httpx.AsyncClient, i: int) -> None:
        nonlocal errors, dropped, tokens
        t0 = time.perf_counter()
        async with c.stream("POST", f"{url}/chat/completions",
                            json=body(i, 99, max_tokens, stream=True)) as r:
            if r.status_code != 200:
                errors += 1
                return
            async for line in r.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                if i % drop_every == 0:
                    dropped += 1
                    return  # leaves mid-stream: the connection closes
                chunk = json.loads(line[6:])
                if "error" in chunk:
                    errors += 1
                tokens += sum(1 for ch in chunk.get("choices", ()) if ch["delta"].get("content"))
        latencies.append(time.perf_counter() - t0)

    async with httpx.AsyncClient(timeout=600, limits=httpx.Limits(
            max_connections=clients + 8)) as c:
        before = (await c.get(f"{url}/stats")).json()["batcher"]
        t0 = time.perf_counter()
        await asyncio.gather(*(client(c, i) for i in range(clients)))
        seconds = time.perf_counter() - t0
        after = (await c.get(f"{url}/stats")).json()
        probe = await c.post(f"{url}/chat/completions", json=body(0, 0, 4))
        errors += probe.status_code != 200
    q = statistics.quantiles(latencies, n=20)
    batch = after["batcher"]
    return Load(seconds, len(latencies), errors, tokens, statistics.median(latencies), q[18],
                batch["sampler_calls"] - before["sampler_calls"],
                batch["rows"] - before["rows"], dropped)


def measure(max_batch: int, args: argparse.Namespace) -> tuple[Load, Load]:
    with bind() as sock:
        port = sock.getsockname()[1]
    proc = start(port, max_batch, args.seed)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        asyncio.run(wait_ready(url))
        asyncio.run(closed_loop(url, 4, 1, 4))  # warm-up
        load = asyncio.run(closed_loop(url, args.clients, args.requests, args.max_tokens))
        stream = asyncio.run(streams(url, args.clients, args.max_tokens, args.drop_every))
        return load, stream
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--requests", type=int, default=4, help="per client, one after another")
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--drop-every", type=int, default=8,
                   help="in the streaming phase, this client in N leaves mid-stream")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print(f"load: {args.clients} concurrent clients x {args.requests} requests, "
          f"max_tokens {args.max_tokens}, tiny policy (1 thread), load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    batched, batched_stream = measure(64, args)
    single, single_stream = measure(1, args)
    print(batched.line("batched"))
    print(single.line("unbatched"))
    print(f"throughput ratio batched/unbatched: {batched.rps / single.rps:.2f}x requests/s, "
          f"p95 latency ratio {single.p95 / batched.p95:.2f}x")
    print(f"streaming, every {args.drop_every}th client leaving after its first chunk:")
    print(batched_stream.line("batched"))
    print(single_stream.line("unbatched"))


if __name__ == "__main__":
    main()

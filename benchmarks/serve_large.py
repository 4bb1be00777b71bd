"""Does one large request stall `tracerl serve`? GET /v1/models latency while big bodies
arrive.

Starts `tracerl serve tiny` as its own process and, in each scenario, polls
GET /v1/models every 20 ms from one client while another sends large chat requests one
after the other:

- `8MB`: a body of 8 MiB (over the default 4 MiB limit: refused with 413 from its
  Content-Length, nothing read);
- `8MB-chunked`: the same body without a Content-Length (read up to the limit, then 413);
- `3MB`: a body under the limit whose one message is far over the context, so it is
  parsed, rendered and tokenized in full before its 400 `context_length_exceeded`
  (the CPU-heavy path, run on the engine's threads, off the event loop);
- `idle`: no large request (the floor).

With `--baseline-src DIR` (e.g. the main checkout's src before issue 32) the same
scenarios run first against that code, started the same way, for a ratio in the same
run. Prints per scenario: the large requests' statuses and seconds, and /v1/models p50,
p99 and max over the polls.

    python benchmarks/serve_large.py
    python benchmarks/serve_large.py --baseline-src /work/main/src --repeats 2
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx

POLL_S = 0.02
WORDS = ("the calculator returns a number when the agent asks for the sum of two values "
         "and then the model writes its final answer in one short sentence").split()


@dataclass(frozen=True)
class Scenario:
    name: str
    size: int
    """Body bytes (0: no large request)."""
    chunked: bool = False


SCENARIOS = [Scenario("idle", 0), Scenario("8MB", 8 * 2**20),
             Scenario("8MB-chunked", 8 * 2**20, chunked=True), Scenario("3MB", 3 * 2**20)]


def body(size: int, seed: int) -> bytes:
    """A chat request of about `size` bytes: one user message of random words."""
    rng = random.Random(seed)
    text = " ".join(rng.choice(WORDS) for _ in range(size // 6))[: size - 120]
    return (b'{"model": "tiny", "max_tokens": 2, "messages": [{"role": "user", "content": "'
            + text.encode() + b'"}]}')


def _pieces(data: bytes) -> Iterator[bytes]:
    for i in range(0, len(data), 65536):
        yield data[i:i + 65536]


def run(url: str, s: Scenario, repeats: int) -> tuple[list[tuple[int, float]], list[float]]:
    """(status, seconds) of each large request, and every /v1/models latency (s)."""
    big: list[tuple[int, float]] = []
    polls: list[float] = []
    done = threading.Event()

    def send() -> None:
        with httpx.Client(timeout=600) as c:
            for k in range(repeats):
                data = body(s.size, k)
                t0 = time.perf_counter()
                try:
                    r = c.post(f"{url}/chat/completions",
                               content=_pieces(data) if s.chunked else data,
                               headers={"Content-Type": "application/json"})
                    status = r.status_code
                except httpx.TransportError:  # a server may close after refusing
                    status = -1
                big.append((status, time.perf_counter() - t0))
        done.set()

    sender = threading.Thread(target=send)
    if s.size:
        sender.start()
    else:
        threading.Timer(2.0, done.set).start()
    with httpx.Client(timeout=600) as c:
        while not done.is_set():
            t0 = time.perf_counter()
            c.get(f"{url}/models").raise_for_status()
            polls.append(time.perf_counter() - t0)
            time.sleep(POLL_S)
    if s.size:
        sender.join()
    return big, polls


def _quantile(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[int(q * 100) - 1] \
        if len(xs) > 1 else xs[0]


def measure(label: str, src: str | None, repeats: int) -> None:
    from serve_process import start  # beside this script (a test loads it by path)

    proc, url = start(src=src, capture=False)
    try:
        for s in SCENARIOS:
            big, polls = run(url, s, repeats)
            ms = [p * 1000 for p in polls]
            sent = ", ".join(f"{st} in {sec:.2f} s" for st, sec in big) or "-"
            print(f"{label:>8} {s.name:>12}: large requests [{sent}]  /v1/models over "
                  f"{len(ms)} polls: p50 {_quantile(ms, .5):7.1f} ms  p99 "
                  f"{_quantile(ms, .99):7.1f} ms  max {max(ms):7.1f} ms", flush=True)
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3, help="large requests per scenario")
    p.add_argument("--baseline-src", help="a src/ directory to measure first, e.g. the "
                                          "code before issue 32")
    args = p.parse_args()
    if args.baseline_src:
        measure("baseline", args.baseline_src, args.repeats)
    measure("this", None, args.repeats)


if __name__ == "__main__":
    main()

"""Verification throughput: code_tests through SandboxPool vs a naive subprocess grader.

Both sides score the same candidates (each built-in problem's reference solution and a
wrong one) in the same run, with the same concurrency:
- baseline: the common grader. Write candidate + tests to a file, start a fresh
  interpreter with subprocess (no isolation at all), 1.0 if the exit code is 0 (one
  process per input/output case for stdin problems, comparing stdout).
- tracerl: `code_tests(..., pool=SandboxPool(workers=W))`, isolation on (namespaces,
  private root, rlimits, pids cgroup: whatever `tracerl doctor` reports here).

Prints verifications/second, p50/p99 latency per verification and worker memory, and
the floor: an empty program through each (a fresh interpreter start vs a run in the
pool), whose ratio bounds the speed-up the pool can show on this host.

    python benchmarks/sandbox.py [--workers 2] [--rounds 10]

Ten rounds (about 35 s here): with three, separate runs on a quiet host scattered
0.66-0.85 in the ratio to the floor; with ten, 0.76-0.89 (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from unittest import mock

from tracerl.envs.code import CodeProblem, load_problems
from tracerl.rewards import code_tests
from tracerl.rewards.prepared import PreparedPlan
from tracerl.sandbox import SandboxPool


@dataclass(frozen=True)
class Candidate:
    problem: CodeProblem
    code: str


def candidates() -> list[Candidate]:
    out = []
    for p in load_problems():
        out.append(Candidate(p, p.solution))
        wrong = "print()\n"
        if p.entry_point:
            wrong = f"def {p.entry_point}(*a, **k):\n    return None\n"
        out.append(Candidate(p, wrong))
    return out


def naive_verify(c: Candidate, tmpdir: str) -> float:
    """The grader everyone writes first: append tests, run, trust the exit code."""
    p = c.problem
    if p.io is not None:
        for case in p.io:  # stops at the first failing case, as code_tests(partial=False)
            proc = subprocess.run([sys.executable, "-c", c.code], input=case.stdin,
                                  capture_output=True, text=True, timeout=10)
            if proc.returncode != 0 or proc.stdout.strip() != case.stdout.strip():
                return 0.0
        return 1.0
    tests = p.tests if isinstance(p.tests, str) else "\n".join(p.tests or ())
    if p.entry_point and "def check(" in tests:
        tests += f"\ncheck({p.entry_point})\n"
    if "def test_" in tests:
        tests += "\nfor _n, _f in list(globals().items()):\n" \
                 "    if _n.startswith('test_') and callable(_f): _f()\n"
    fd, path = tempfile.mkstemp(suffix=".py", dir=tmpdir)
    with os.fdopen(fd, "w") as f:
        f.write(c.code + "\n\n" + tests)
    proc = subprocess.run([sys.executable, path], capture_output=True, timeout=10)
    os.unlink(path)
    return float(proc.returncode == 0)


def cpu_seconds(pool: SandboxPool) -> float:
    """CPU time spent so far by this process, its reaped children (the naive grader's
    interpreters) and the pool's worker trees (whose reaped job children are counted
    in the workers' own totals)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    ticks = 0
    for w in list(pool._idle.queue):
        if w is not None:
            for pid in [w.proc.pid] + _descendants(w.proc.pid):
                ticks += _cpu_ticks(pid)
    return (own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
            + ticks / os.sysconf("SC_CLK_TCK"))


def _descendants(pid: int) -> list[int]:
    out = []
    for child in _children(pid):
        out += [child, *_descendants(child)]
    return out


def _cpu_ticks(pid: int) -> int:
    """utime + stime + cutime + cstime of a live process, in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15])
    except (OSError, IndexError, ValueError):
        return 0


def measure(fn: Callable[[Candidate], float | None], cands: list[Candidate], workers: int,
            rounds: int) -> tuple[float, list[float], list[float | None]]:
    """(verifications per second, per-call latencies in s, scores of the last round)."""
    latencies: list[float] = []

    def timed(c: Candidate) -> float | None:
        t0 = time.perf_counter()
        score = fn(c)
        latencies.append(time.perf_counter() - t0)
        return score

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as ex:
        for _ in range(rounds):
            scores = list(ex.map(timed, cands))
    elapsed = time.perf_counter() - start
    return len(cands) * rounds / elapsed, latencies, scores


def worker_rss_mb(pool: SandboxPool) -> list[float]:
    """Resident memory of each worker interpreter (the process inside the namespaces)."""
    out = []
    for w in list(pool._idle.queue):
        if w is None:
            continue
        pids = [w.proc.pid] + _children(w.proc.pid)
        out.append(sum(_rss_kb(pid) for pid in pids) / 1024)
    return out


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next(ln for ln in f if ln.startswith("VmRSS:"))
        return int(line.split()[1])
    except (OSError, StopIteration):
        return 0


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    cands = candidates()
    with SandboxPool(workers=args.workers) as pool, tempfile.TemporaryDirectory() as tmp:
        print(f"host: {os.cpu_count()} cpus; workers={args.workers}; "
              f"{len(cands)} candidates x {args.rounds} rounds")
        print(f"isolation layers missing: {list(pool.missing_isolation) or 'none'}")

        def ours(c: Candidate) -> float | None:
            return code_tests(c.code, c.problem.hidden_tests, entry_point=c.problem.entry_point,
                              pool=pool, timeout_s=5, partial=False).score

        measure(ours, cands[:20], args.workers, 1)  # warm-up
        empty = [Candidate(cands[0].problem, "pass")] * 100
        # Rounds interleave the four measurements, so that load from other jobs on a
        # shared host hits each about equally (the ratios are the figures that matter).
        runs: dict[str, list[tuple[float, list[float], list[float | None]]]] = {
            "base": [], "ours": [], "fresh": [], "fork": [], "serial": []}
        cpu = dict.fromkeys(runs, 0.0)  # CPU seconds per item, summed over rounds

        def timed(key: str, fn: Callable[[Candidate], float | None],
                  items: list[Candidate]) -> None:
            before = cpu_seconds(pool)
            runs[key].append(measure(fn, items, args.workers, 1))
            cpu[key] += (cpu_seconds(pool) - before) / len(items) / args.rounds

        for _ in range(args.rounds):
            timed("base", lambda c: naive_verify(c, tmp), cands)
            timed("ours", ours, cands)
            # The harness before issue 15: every candidate call its own round trip.
            with mock.patch("tracerl.rewards.code.prepare", PreparedPlan.one_call_a_trip):
                timed("serial", ours, cands)
            timed("fresh", lambda c: _fresh_interpreter(), empty)
            timed("fork", lambda c: float(pool.run_python(c.code).status == "ok"), empty)
        base_rate, base_lat, base_scores = _merge(runs["base"])
        our_rate, our_lat, our_scores = _merge(runs["ours"])
        serial_rate, serial_lat, _ = _merge(runs["serial"])
        start_rate, fork_rate = _merge(runs["fresh"])[0], _merge(runs["fork"])[0]
        agree = sum(a == b for a, b in zip(base_scores, our_scores, strict=True))
        rss = worker_rss_mb(pool)
    print(f"{'':28s}{'verif/s':>10s}{'p50 ms':>10s}{'p99 ms':>10s}")
    for name, rate, lat in (("naive subprocess (no isolation)", base_rate, base_lat),
                            ("tracerl, one call a trip", serial_rate, serial_lat),
                            ("tracerl SandboxPool", our_rate, our_lat)):
        print(f"{name:28s}{rate:10.1f}{pct(lat, .5) * 1e3:10.1f}{pct(lat, .99) * 1e3:10.1f}")
    print(f"speed-up: {our_rate / base_rate:.1f}x; verdicts agree on {agree}/{len(cands)}")
    print(f"worker RSS MB: {', '.join(f'{r:.1f}' for r in rss)} "
          f"(mean {statistics.mean(rss) if rss else 0:.1f})")
    print(f"floor, an empty program: fresh interpreter {start_rate:.0f} runs/s vs SandboxPool "
          f"{fork_rate:.0f} runs/s -> {fork_rate / start_rate:.1f}x: the most SandboxPool can "
          f"gain over the naive grader on this host, since every verification costs a run")
    speedup, floor = our_rate / base_rate, fork_rate / start_rate
    print(f"code_tests at {speedup / floor:.2f} of the floor's ratio to the naive grader "
          f"({speedup:.2f}x / {floor:.2f}x; issue 15 target >= 0.8); one call a trip: "
          f"{serial_rate / base_rate / floor:.2f}; pipelined / one call a trip: "
          f"{our_rate / serial_rate:.2f}x")
    ms = {k: v * 1e3 for k, v in cpu.items()}
    print(f"CPU ms per item (this process + its children + the pool's workers): naive "
          f"{ms['base']:.2f}, code_tests {ms['ours']:.2f}, one call a trip {ms['serial']:.2f}, "
          f"fresh interpreter {ms['fresh']:.2f}, empty program in the pool {ms['fork']:.2f}")
    cpu_floor = cpu["fresh"] / cpu["fork"]
    print(f"by CPU time: code_tests at {cpu['base'] / cpu['ours'] / cpu_floor:.2f} of the "
          f"floor's ratio ({cpu['base'] / cpu['ours']:.2f}x / {cpu_floor:.2f}x); one call a "
          f"trip: {cpu['base'] / cpu['serial'] / cpu_floor:.2f}")


def _merge(runs: list[tuple[float, list[float], list[float | None]]]
           ) -> tuple[float, list[float], list[float | None]]:
    """Rounds of `measure` as one: the rate is total items over total time."""
    items = sum(len(r[1]) for r in runs)
    seconds = sum(len(r[1]) / r[0] for r in runs)
    return items / seconds, [x for r in runs for x in r[1]], runs[-1][2]


def _fresh_interpreter() -> float:
    """What the naive grader pays before running anything: one interpreter start."""
    return float(subprocess.run([sys.executable, "-c", "pass"]).returncode == 0)


if __name__ == "__main__":
    main()

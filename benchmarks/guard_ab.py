"""`scan()` latency of two tracerl source trees in one process, interleaved (issue 15).

    git archive 2c9e552 src/tracerl | tar -x -C /tmp/guard_base
    python benchmarks/guard_ab.py /tmp/guard_base/src src

Both trees' `tracerl.guard.scan` are imported side by side (the module cache is cleared
between the two imports) and timed on the same 2 KB realistic text as benchmarks/guard.py
(four copies in turn, so no per-text cache survives from one scan to the next),
in alternating blocks of 150 scans, so load from other jobs hits both alike. Prints wall
p50/p99 and thread-CPU p50/p99 per tree and the ratios of the second to the first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

from guard import ADVERSARIAL, copies, realistic


def load_scan(src: str) -> Callable[[str], object]:
    """`tracerl.guard.scan` from the tree at `src`, imported fresh."""
    for name in [k for k in sys.modules if k == "tracerl" or k.startswith("tracerl.")]:
        del sys.modules[name]
    sys.path.insert(0, src)
    try:
        from tracerl.guard import scan
    finally:
        sys.path.remove(src)
    return scan


def quantile(times: list[float], q: float) -> float:
    """The value below which a fraction q of `times` lies (as the table reports it)."""
    ordered = sorted(times)
    return ordered[int(len(ordered) * q)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="src/ directory of the baseline tree")
    parser.add_argument("new", help="src/ directory of the tree under test")
    parser.add_argument("--blocks", type=int, default=20, help="blocks of scans per tree")
    parser.add_argument("--per-block", type=int, default=150, help="scans per block")
    parser.add_argument("--size", type=int, default=2048, help="characters of text")
    parser.add_argument("--adversarial", choices=sorted(ADVERSARIAL),
                        help="one of guard.py's adversarial units repeated, not realistic text")
    args = parser.parse_args()
    scans = {"base": load_scan(args.base), "new": load_scan(args.new)}
    unit = ADVERSARIAL.get(args.adversarial or "")
    text = (unit * (args.size // len(unit) + 1))[: args.size] if unit else realistic(args.size)
    fresh = copies(text)  # a new text object each scan, as on the rollout path
    for scan in scans.values():
        for _ in range(min(200, 2 * args.per_block)):
            scan(fresh())
    wall: dict[str, list[float]] = {k: [] for k in scans}
    cpu: dict[str, list[float]] = {k: [] for k in scans}
    for _ in range(args.blocks):
        for name, scan in scans.items():
            for _ in range(args.per_block):
                text = fresh()
                c0, t0 = time.thread_time_ns(), time.perf_counter()
                scan(text)
                wall[name].append((time.perf_counter() - t0) * 1e3)
                cpu[name].append((time.thread_time_ns() - c0) / 1e6)
    print(f"{args.blocks * args.per_block} scans of {args.size} characters "
          f"({args.adversarial or 'realistic'}) per tree")
    print("| tree | wall p50 ms | wall p99 ms | cpu p50 ms | cpu p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name in scans:
        w, c = wall[name], cpu[name]
        print(f"| {name} | {statistics.median(w):.3f} | {quantile(w, 0.99):.3f} | "
              f"{statistics.median(c):.3f} | {quantile(c, 0.99):.3f} |")
    for label, times in (("cpu", cpu), ("wall", wall)):
        p50 = statistics.median(times["new"]) / statistics.median(times["base"])
        p99 = quantile(times["new"], 0.99) / quantile(times["base"], 0.99)
        print(f"new / base, {label} p50: {p50:.2f}, {label} p99: {p99:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

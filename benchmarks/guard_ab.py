"""`scan()` latency of two tracerl source trees in one process, interleaved (issue 15).

    git archive 2c9e552 src/tracerl | tar -x -C /tmp/guard_base
    python benchmarks/guard_ab.py /tmp/guard_base/src src

Both trees' `tracerl.guard.scan` are imported side by side (the module cache is cleared
between the two imports) and timed on the same 2 KB realistic text as benchmarks/guard.py,
in alternating blocks of 150 scans, so load from other jobs hits both alike. Prints wall
p50/p99 and thread-CPU p50/p99 per tree and the ratio of the second to the first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

from guard import realistic


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="src/ directory of the baseline tree")
    parser.add_argument("new", help="src/ directory of the tree under test")
    parser.add_argument("--blocks", type=int, default=20, help="blocks of 150 scans per tree")
    args = parser.parse_args()
    scans = {"base": load_scan(args.base), "new": load_scan(args.new)}
    text = realistic(2048)
    for scan in scans.values():
        for _ in range(200):
            scan(text)
    wall: dict[str, list[float]] = {k: [] for k in scans}
    cpu: dict[str, list[float]] = {k: [] for k in scans}
    for _ in range(args.blocks):
        for name, scan in scans.items():
            for _ in range(150):
                c0, t0 = time.thread_time_ns(), time.perf_counter()
                scan(text)
                wall[name].append((time.perf_counter() - t0) * 1e3)
                cpu[name].append((time.thread_time_ns() - c0) / 1e6)
    print(f"{args.blocks * 150} scans of 2 KB per tree")
    print("| tree | wall p50 ms | wall p99 ms | cpu p50 ms | cpu p99 ms |")
    print("|---|---:|---:|---:|---:|")
    for name in scans:
        w, c = sorted(wall[name]), sorted(cpu[name])
        p99 = int(len(w) * 0.99)
        print(f"| {name} | {statistics.median(w):.3f} | {w[p99]:.3f} | "
              f"{statistics.median(c):.3f} | {c[p99]:.3f} |")
    ratio = statistics.median(cpu["new"]) / statistics.median(cpu["base"])
    print(f"new / base, cpu p50: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

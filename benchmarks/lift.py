"""Held-out lift of a training config over several seeds: wall time and peak RSS included.

Runs `tracerl train CONFIG seed=S` once per seed (each a fresh process, one after the
other unless --parallel), reads each run's summary.json and prints, per seed and over
all: held-out success before and after RL, the lift in points, the whole process's
wall time (model load, SFT, both evaluations and RL) and its peak resident memory
(the kernel's high-water mark of that process, from wait4).

    python benchmarks/lift.py examples/smollm2-calc.yaml [key=value ...] --seeds 0 1 2

Then the range of each side over the seeds (`before RL: 0.359-0.406 between seeds (spread
0.047)`: issue 34's post-SFT spread); the last line is `mean lift: +N.N points (std ...),
wall <= M.M min, peak RSS <= G.GG GB`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SeedRun:
    seed: int
    before: float
    after: float
    wall_s: float
    peak_rss_gb: float

    @property
    def lift(self) -> float:
        return 100 * (self.after - self.before)


def run_seed(config: str | None, seed: int, out: Path, overrides: list[str]
             ) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "tracerl.cli", "train", *([config] if config else []),
           f"seed={seed}",
           f"out_dir={out}", f"name=seed{seed}", *overrides, "--overwrite"]
    log = (out / f"seed{seed}.log").open("w")
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)


def wait_seed(proc: subprocess.Popen, seed: int, out: Path, start: float) -> SeedRun:
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"seed {seed} failed; see {out / f'seed{seed}.log'}")
    summary = json.loads((out / f"seed{seed}" / "summary.json").read_text())
    if summary["success_before"] is None:
        raise SystemExit("the config has no evaluation before RL (eval.before=false?)")
    return SeedRun(seed, summary["success_before"], summary["success_after"], wall,
                   usage.ru_maxrss / 2**20)  # KiB -> GiB


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("args", nargs="*", metavar="[CONFIG] [key=value ...]",
                    help="a YAML config (default: the embedded defaults) and overrides")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--parallel", action="store_true",
                    help="run the seeds at once (each should then set threads=1)")
    ap.add_argument("--out", help="where the runs go (default: a temporary directory)")
    args = ap.parse_args()
    config = next((a for a in args.args if "=" not in a), None)
    args.overrides = [a for a in args.args if "=" in a]
    args.config = config
    out = Path(args.out or tempfile.mkdtemp(prefix="lift-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"{args.config or 'defaults'} {' '.join(args.overrides)}: seeds {args.seeds}, "
          f"runs in {out}, load average at start {os.getloadavg()[0]:.2f}", flush=True)
    runs: list[SeedRun] = []
    if args.parallel:
        start = time.perf_counter()
        procs = [(s, run_seed(args.config, s, out, args.overrides)) for s in args.seeds]
        runs = [wait_seed(p, s, out, start) for s, p in procs]
    else:
        for s in args.seeds:
            start = time.perf_counter()
            runs.append(wait_seed(run_seed(args.config, s, out, args.overrides), s, out, start))
            r = runs[-1]
            print(f"  seed {s}: {r.before:.3f} -> {r.after:.3f} ({r.lift:+.1f} points) "
                  f"in {r.wall_s / 60:.1f} min, peak RSS {r.peak_rss_gb:.2f} GB", flush=True)
    if args.parallel:
        for r in runs:
            print(f"  seed {r.seed}: {r.before:.3f} -> {r.after:.3f} ({r.lift:+.1f} points) "
                  f"in {r.wall_s / 60:.1f} min, peak RSS {r.peak_rss_gb:.2f} GB")
    for label, values in (("before RL", [r.before for r in runs]),
                          ("after RL", [r.after for r in runs])):
        print(f"{label}: {min(values):.3f}-{max(values):.3f} between seeds "
              f"(spread {max(values) - min(values):.3f})")
    lifts = [r.lift for r in runs]
    spread = statistics.stdev(lifts) if len(lifts) > 1 else 0.0
    print(f"mean lift: {statistics.mean(lifts):+.1f} points (std {spread:.1f}, "
          f"min {min(lifts):+.1f}), wall <= {max(r.wall_s for r in runs) / 60:.1f} min, "
          f"peak RSS <= {max(r.peak_rss_gb for r in runs):.2f} GB")


if __name__ == "__main__":
    main()

"""CLI start-up: wall-clock time of `tracerl` commands that should not load torch.

Each command runs as a fresh subprocess `--repeats` times (default 5); the median is
reported. In the same run, as baselines: the bare interpreter (`python -c pass`) and
`python -c "import torch"`, the cost a command pays when it imports torch at start.
Ratios are to `import torch`.

    .venv/bin/python benchmarks/cli_startup.py
    .venv/bin/python benchmarks/cli_startup.py --repeats 9

`tracerl` is the console script beside this interpreter when there is one (it honours
PYTHONPATH, so a source checkout can be timed), else `python -m tracerl.cli`.
`tracerl doctor` includes starting a sandbox worker and probing it, so its floor is
higher than the help commands'.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _tracerl() -> list[str]:
    script = Path(sys.executable).with_name("tracerl")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "tracerl.cli"]


def _median_seconds(argv: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="runs per command (median)")
    args = parser.parse_args()
    tracerl = _tracerl()
    rows = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ('python -c "import torch"', [sys.executable, "-c", "import torch"]),
        ("tracerl --help", [*tracerl, "--help"]),
        ("tracerl doctor --help", [*tracerl, "doctor", "--help"]),
        ("tracerl train --help", [*tracerl, "train", "--help"]),
        ("tracerl doctor", [*tracerl, "doctor"]),
    ]
    print(f"tracerl = {' '.join(tracerl)}; median of {args.repeats} runs each\n")
    results = [(name, _median_seconds(argv, args.repeats)) for name, argv in rows]
    torch_s = results[1][1]
    print("| command | median s | / import torch |")
    print("|---|---:|---:|")
    for name, seconds in results:
        print(f"| `{name}` | {seconds:.3f} | {seconds / torch_s:.2f} |")


if __name__ == "__main__":
    main()

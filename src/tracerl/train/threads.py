"""How many CPU threads torch uses, chosen so that a shared machine stays fast.

torch's default is one OpenMP thread per core. When other work already keeps those
cores busy, the threads spin against each other and against it: on this project's 2-core
VM a default-threaded run beside one other busy process was several times slower than
the same run with one thread (docs/benchmarks.md, "Threads"). `threads=0` (auto) counts
the cores this process may use, subtracts the ones other work keeps busy, and keeps at
least one; an explicit `threads=N` is used as given.

"Busy" is measured, not read from the load average: the 1-minute average lags by about a
minute, so a run started right after a test suite or another run saw a load near 2 on an
idle machine and took one thread of two. The busy cores are the non-idle share of all
CPU time in /proc/stat over `SAMPLE_S` (this process sleeps meanwhile); without
/proc/stat the load average stands in.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

SAMPLE_S = 0.25
"""How long the busy cores are measured at start."""


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    cores: int
    load: float
    """Cores busy with other work when the run started (measured; see busy_cores)."""

    @property
    def oversubscribed(self) -> bool:
        """Other work already keeps (nearly) every core busy."""
        return self.load > self.cores - 0.25

    def warning(self) -> str | None:
        if not self.oversubscribed:
            return None
        return (f"warning: this machine is oversubscribed (other work keeps "
                f"{self.load:.1f} of {self.cores} cores busy); training with "
                f"{self.threads} thread(s) will be slower than on a quiet machine")


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs so far, from /proc/stat (None elsewhere)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already counted in user
    return total - idle, total


def busy_cores(sample_s: float = SAMPLE_S) -> float:
    """How many cores other work keeps busy now: measured over `sample_s` from
    /proc/stat, else the 1-minute load average, else 0."""
    first = _cpu_times()
    if first is not None:
        time.sleep(sample_s)
        second = _cpu_times()
        if second is not None and second[1] > first[1]:
            share = (second[0] - first[0]) / (second[1] - first[1])
            return share * (os.cpu_count() or 1)
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def choose_threads(requested: int, cores: int | None = None,
                   load: float | None = None) -> ThreadChoice:
    """`requested` > 0 is kept; 0 means the cores not already busy (at least 1).
    `load` (busy cores) is measured when not given."""
    cores = cores if cores is not None else usable_cores()
    if load is None:
        load = busy_cores()
    if requested > 0:
        return ThreadChoice(requested, cores, load)
    free = cores - int(round(load))
    return ThreadChoice(max(1, min(cores, free)), cores, load)

"""How many CPU threads torch uses, chosen so that a shared machine stays fast.

torch's default is one OpenMP thread per core. When other work already keeps those
cores busy, the threads spin against each other and against it: on this project's 2-core
VM a default-threaded run beside one other busy process was several times slower than
the same run with one thread (docs/benchmarks.md, "Threads"). `threads=0` (auto) counts
the cores this process may use, subtracts the ones the 1-minute load average says are
busy, and keeps at least one; an explicit `threads=N` is used as given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ThreadChoice:
    threads: int
    cores: int
    load: float
    """1-minute load average when the run started."""

    @property
    def oversubscribed(self) -> bool:
        return self.load > self.cores

    def warning(self) -> str | None:
        if not self.oversubscribed:
            return None
        return (f"warning: this machine is oversubscribed (load {self.load:.1f} on "
                f"{self.cores} cores); training with {self.threads} thread(s) will be "
                "slower than on a quiet machine")


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def choose_threads(requested: int, cores: int | None = None,
                   load: float | None = None) -> ThreadChoice:
    """`requested` > 0 is kept; 0 means the cores not already busy (at least 1)."""
    cores = cores if cores is not None else usable_cores()
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            load = 0.0
    if requested > 0:
        return ThreadChoice(requested, cores, load)
    free = cores - int(round(load))
    return ThreadChoice(max(1, min(cores, free)), cores, load)

"""What one sandboxed run returns, and the limits it runs under."""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

ExecStatus = Literal[
    "ok", "error", "timeout", "memory_limit", "output_limit", "killed", "infra_error"
]
EXEC_STATUSES: tuple[str, ...] = (
    "ok", "error", "timeout", "memory_limit", "output_limit", "killed", "infra_error",
)
Isolation = Literal["strict", "best_effort"]


class SandboxUnavailable(RuntimeError):
    """`isolation="strict"` was asked for and this host cannot provide it."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one run; every field is enforced in the child process."""

    timeout_s: float = 10.0
    """Wall-clock limit; at expiry the whole process group (and namespace) is killed."""
    memory_mb: int = 1024
    """Address-space limit per process (RLIMIT_AS)."""
    max_procs: int = 32
    """Processes/threads (RLIMIT_NPROC, and the pids cgroup where available)."""
    file_mb: int = 16
    """Largest file the code may write (RLIMIT_FSIZE)."""
    open_files: int = 64
    """Open file descriptors (RLIMIT_NOFILE)."""
    output_bytes: int = 1 << 20
    """Captured stdout / stderr each; beyond it the run ends as output_limit."""

    def __post_init__(self) -> None:
        for name in ("timeout_s", "memory_mb", "max_procs", "file_mb", "open_files"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")
        if self.output_bytes < 1:
            raise ValueError(f"Limits.output_bytes must be >= 1, got {self.output_bytes!r}")

    @property
    def cpu_s(self) -> int:
        """CPU-seconds limit: the wall limit rounded up, so CPU time never outlives it."""
        return max(1, math.ceil(self.timeout_s))

    def to_wire(self) -> dict[str, Any]:
        return dict(_limits_wire(self))


@functools.lru_cache(maxsize=256)
def _limits_wire(limits: Limits) -> dict[str, Any]:
    # asdict deep-copies every field: it was a tenth of a code_tests call's parent CPU,
    # and runs mostly share a few Limits values
    return {**asdict(limits), "cpu_s": limits.cpu_s}


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one sandboxed run."""

    status: ExecStatus
    returncode: int | None
    """Exit code, or minus the signal number that ended the process."""
    stdout: str
    stderr: str
    wall_s: float
    missing_isolation: tuple[str, ...] = ()
    """Isolation layers that were not in force for this run (empty when fully isolated)."""
    error: str | None = None
    """For infra_error: what failed in the sandbox machinery itself."""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def infra_error(message: str, wall_s: float = 0.0) -> ExecResult:
    """A run that could not be judged because the sandbox itself failed."""
    return ExecResult("infra_error", None, "", "", wall_s, error=message)

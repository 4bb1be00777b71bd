"""Isolated execution of untrusted code: namespaces, a private root, limits, a warm pool.

`run_python(code)` runs in a process-wide default pool (started on first use);
`SandboxPool(workers=N)` gives a pool of your own. Both report, on every result,
which isolation layers were missing (`ExecResult.missing_isolation`).
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Mapping

from tracerl.sandbox.doctor import isolation_report
from tracerl.sandbox.isolation import IsolationReport
from tracerl.sandbox.pool import SandboxPool
from tracerl.sandbox.result import (
    EXEC_STATUSES,
    ExecResult,
    ExecStatus,
    Isolation,
    Limits,
    SandboxUnavailable,
)
from tracerl.sandbox.session import Session

_default_pools: dict[str, SandboxPool] = {}
_default_lock = threading.Lock()


def default_pool(isolation: Isolation = "best_effort") -> SandboxPool:
    """The process-wide pool `run_python` uses (one worker per isolation level)."""
    with _default_lock:
        pool = _default_pools.get(isolation)
        if pool is None:
            pool = SandboxPool(workers=1, isolation=isolation)
            _default_pools[isolation] = pool
        return pool


@atexit.register
def _close_default_pools() -> None:
    with _default_lock:
        for pool in _default_pools.values():
            pool.close()
        _default_pools.clear()


def run_python(
    code: str,
    *,
    stdin: str = "",
    timeout_s: float = 10.0,
    memory_mb: int = 1024,
    files: Mapping[str, str | bytes] | None = None,
    isolation: Isolation = "best_effort",
) -> ExecResult:
    """Run `code` as a script in a fresh sandboxed process and return how it went.

    `isolation="strict"` raises SandboxUnavailable where namespaces or the private
    root are unavailable; "best_effort" runs anyway, warns loudly once, and lists the
    missing layers in `ExecResult.missing_isolation`.
    """
    return default_pool(isolation).run_python(
        code, stdin=stdin, timeout_s=timeout_s, memory_mb=memory_mb, files=files
    )


__all__ = [
    "EXEC_STATUSES",
    "ExecResult",
    "ExecStatus",
    "Isolation",
    "IsolationReport",
    "Limits",
    "SandboxPool",
    "SandboxUnavailable",
    "Session",
    "default_pool",
    "isolation_report",
    "run_python",
]

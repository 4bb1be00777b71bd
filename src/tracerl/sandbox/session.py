"""Session: a sandboxed process that loads code once and then answers requests.

The reward harness (tracerl.rewards.code) uses it to call a candidate's functions from
the trusted parent: the child gets call arguments, the parent keeps the expected
values. The child runs under the same limits as any run; its whole life is bounded by
`limits.timeout_s`, and each request by its own deadline, after which the worker
kills it.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from tracerl.sandbox import _wire
from tracerl.sandbox.pool import GRACE_S, SandboxPool, _Worker
from tracerl.sandbox.result import ExecResult, Limits, infra_error


class Session:
    """Interactive counterpart of `run_python`; use as a context manager."""

    def __init__(self, pool: SandboxPool, code: str, limits: Limits,
                 load_timeout_s: float | None = None) -> None:
        self.limits = limits
        self._sock, child = socket.socketpair()
        self._child: socket.socket | None = child
        self._worker: _Worker | None = None
        self._sent = threading.Event()
        self._result: ExecResult | None = None
        self.alive = True
        job = pool.job(code, limits, module_name="__candidate__")
        self._job_id: str = job["id"]
        self._thread = threading.Thread(
            target=self._run, args=(pool, job, child.fileno()), daemon=True
        )
        self._thread.start()
        self._sent.wait(limits.timeout_s + GRACE_S)
        self._close_child()
        hello = self._recv(load_timeout_s or limits.timeout_s)
        self.loaded = bool(hello and hello.get("loaded"))
        if hello is None:
            self.alive = False

    def _run(self, pool: SandboxPool, job: dict[str, Any], fd: int) -> None:
        try:
            self._result = pool.execute(job, [fd], on_sent=self._on_sent)
        finally:
            self._sent.set()

    def _on_sent(self, worker: _Worker) -> None:
        self._worker = worker
        self._sent.set()

    def _close_child(self) -> None:
        if self._child is not None:
            self._child.close()
            self._child = None

    def _recv(self, timeout_s: float) -> dict[str, Any] | None:
        try:
            self._sock.settimeout(timeout_s)
            msg, _ = _wire.recv_msg(self._sock)
        except (OSError, _wire.WireError):
            msg = None
        if msg is None or not isinstance(msg, dict):
            self._fail()
            return None
        return msg

    def _fail(self) -> None:
        self.alive = False
        if self._worker is not None:
            self._worker.request_kill(self._job_id)

    def request(self, msg: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
        """One request/reply; None when the child died, hung or broke the protocol."""
        if not self.alive:
            return None
        try:
            self._sock.settimeout(timeout_s)
            _wire.send_msg(self._sock, msg)
        except OSError:
            self._fail()
            return None
        return self._recv(timeout_s)

    def close(self) -> ExecResult:
        """End the child (EOF on its socket) and return how its run ended."""
        self._sock.close()
        self._thread.join(self.limits.timeout_s + 2 * GRACE_S)
        self._close_child()
        if self._result is None:
            return infra_error("sandbox session did not report a result")
        return self._result

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

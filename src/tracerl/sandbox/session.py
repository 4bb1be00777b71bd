"""Session: a sandboxed process that loads code once and then answers requests.

The reward harness (tracerl.rewards.code) uses it to call a candidate's functions from
the trusted parent: the child gets call arguments, the parent keeps the expected
values. The child runs under the same limits as any run; its whole life is bounded by
`limits.timeout_s`, each request by its own deadline, after which the worker kills it.
Everything happens on the caller's thread: the job is sent, the child is talked to
directly over a socket pair, and the worker's report is collected at `close()`.
"""

from __future__ import annotations

import _socket
import time
from collections.abc import Iterator
from typing import Any

from tracerl.sandbox import _wire
from tracerl.sandbox.pool import SandboxPool
from tracerl.sandbox.result import ExecResult, Limits

SETTLE_S = 0.02
"""How often a settling session checks what its child has sent (see `_settle`): a
hang is caught at most this much later than by reading message by message."""


class Session:
    """Interactive counterpart of `run_python`; use as a context manager.

    `ahead`: a first request sent with the job. `settle`: when `ahead` ends the session,
    how many messages the child sends in all (the hello and `ahead`'s replies); they
    are then read once the run is over instead of one wake-up each (see `_settle`)."""

    def __init__(self, pool: SandboxPool, code: str, limits: Limits,
                 load_timeout_s: float | None = None,
                 ahead: dict[str, Any] | bytes | None = None, settle: int = 0) -> None:
        self.limits = limits
        self._pool = pool
        # The C socket type, as the child holds it: the session uses nothing of
        # socket.socket's Python layer, whose socketpair() costs two more system calls.
        self._sock, child = _socket.socketpair()
        self._timeout: float | None = None
        self._reader = _wire.Reader(self._sock)
        job = pool.job(code, limits, module_name="__candidate__")
        wire = None
        if ahead is not None:  # goes with the job: the child answers it without a read
            text = ahead if type(ahead) is bytes else _wire.dumps(ahead)
            wire = b"".join((_wire.dumps(job)[:-1], b',"ahead":', text, b"}"))
        try:
            self._run = pool.begin(job, [child.fileno()], wire)
        finally:
            child.close()  # the worker holds its own copy now; EOF must reach us
        self._result: ExecResult | None = None
        self.alive = self._run.failed is None
        self._expired = False
        if settle and self.alive:
            self._settle(settle, load_timeout_s or limits.timeout_s)
        hello = self._recv(load_timeout_s or limits.timeout_s) if self.alive else None
        self.hello: dict[str, Any] = hello or {}
        """The child's first message: {"loaded": bool, ...} (untrusted, like every reply)."""
        self.loaded = bool(hello and hello.get("loaded"))

    def _settle(self, messages: int, deadline_s: float) -> None:
        """Sleep until the run has ended or `messages` messages wait in the buffer,
        instead of waking once per message: each wake-up cost more than reading the
        message (issue 15; on a virtual machine, on both sides of the socket). Checks
        what has arrived every SETTLE_S (a tenth of `deadline_s` at most): a child that
        stays after its answers (one handed out a reference) is read at the next check,
        and when nothing new came for `deadline_s`, the per-message deadline, the next
        read that would wait fails at once, as it would have after waiting that long."""
        interval = min(SETTLE_S, deadline_s / 10)
        last = time.monotonic()
        try:
            while not self._run.wait_ended(interval):
                got = self._reader.pull()
                if got < 0 or self._reader.buffered() >= messages:
                    return
                now = time.monotonic()
                if got:
                    last = now
                elif now - last >= deadline_s:
                    self._expired = True
                    return
        except (OSError, _wire.WireError):
            return  # the reads that follow meet it again and fail the session

    def _settimeout(self, timeout_s: float) -> None:
        """Each settimeout is a system call; calls mostly share one deadline."""
        if timeout_s != self._timeout:
            self._sock.settimeout(timeout_s)
            self._timeout = timeout_s

    def _recv(self, timeout_s: float) -> dict[str, Any] | None:
        try:  # messages already buffered are read whatever the deadline
            self._settimeout(0.0 if self._expired else timeout_s)
            msg = self._reader.recv_msg()
        except (OSError, _wire.WireError):
            msg = None
        if msg is None or not isinstance(msg, dict):
            self._fail()
            return None
        return msg

    def _fail(self) -> None:
        """The child died, hung or lied about the protocol: have the worker kill it."""
        if self.alive and self._run.worker is not None:
            self._run.worker.request_kill(self._run.job["id"])
        self.alive = False

    def _send(self, msg: dict[str, Any] | bytes, timeout_s: float) -> bool:
        """Send `msg` (a message, or one already JSON-encoded: see _wire.send_msg)."""
        try:
            self._settimeout(timeout_s)
            _wire.send_msg(self._sock, msg)
            return True
        except OSError:
            self._fail()
            return False

    def request(self, msg: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
        """One request/reply; None when the child died, hung or broke the protocol."""
        if not self.alive or not self._send(msg, timeout_s):
            return None
        return self._recv(timeout_s)

    def stream(self, msg: dict[str, Any] | bytes | None, replies: int,
               timeout_s: float) -> Iterator[dict[str, Any] | None]:
        """Send one pipelined request and yield its `replies` replies as they arrive,
        each within its own `timeout_s`. A None means the child died, hung or broke the
        protocol on that reply; it is the last thing yielded (the child is killed).
        With `msg` None, read the replies of the request sent at start (`ahead`)."""
        if not self.alive or (msg is not None and not self._send(msg, timeout_s)):
            yield None
            return
        for _ in range(replies):
            reply = self._recv(timeout_s)
            yield reply
            if reply is None:
                return

    def close(self) -> ExecResult:
        """End the child (EOF on its socket) and return how its run ended."""
        if self._result is None:
            self._sock.close()
            self._result = self._pool.finish(self._run)
        return self._result

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

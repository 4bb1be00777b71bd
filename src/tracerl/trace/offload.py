"""OffloadedTracer: trajectories are turned into spans in a separate process.

Building OpenInference spans with the OpenTelemetry SDK and writing them to SQLite is
pure Python: about 0.5 ms of CPU per trajectory of the default run, all of it under
the GIL. On a background thread that time still comes out of the rollout (which is
itself mostly Python); in a child process it runs on another core. The rollout's own
cost drops to pickling the finished Trajectory (about 25 us) and handing the bytes to
a feeder thread that writes them to the child's stdin.

    tracer = OffloadedTracer.for_run("runs/exp1")
    tracer.submit(traj, run="exp1", step=3, model_name="tiny", guardrails=[...])
    tracer.flush()   # everything submitted so far is in the store
    tracer.close()

Same spans and the same store as Tracer (the child runs a Tracer). Failures are
contained and counted in `failures`: a trajectory that cannot be pickled, a span the
child could not record, and, if the child dies, every trajectory it had not confirmed;
after that the remaining ones are recorded in-process by a plain Tracer. When the
parent dies, even by SIGKILL, the child sees end of input, exports what it has and exits.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import queue
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from tracerl.trace.store import STORE_FILENAME
from tracerl.trace.tracer import Tracer, otlp_traces_url
from tracerl.types import Trajectory

log = logging.getLogger(__name__)
_HEADER = struct.Struct("!I")
START_TIMEOUT_S = 60.0
MAX_PENDING = 10_000
"""Trajectories queued for the child at most (a few KB each); beyond that `submit`
waits for the child to catch up instead of growing memory without bound."""


@dataclass(frozen=True)
class TracerSettings:
    """What the child (and the in-process fallback) build their Tracer from."""

    store: str | None
    otlp_endpoint: str | None = None
    otlp_headers: dict[str, str] = field(default_factory=dict)
    service_name: str = "tracerl"

    def tracer(self) -> Tracer:
        return Tracer(self.store, otlp_endpoint=self.otlp_endpoint,
                      otlp_headers=self.otlp_headers, service_name=self.service_name)


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def read_frame(stream: IO[bytes]) -> bytes | None:
    """One length-prefixed frame, or None at end of stream."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(head)
    body = stream.read(size)
    return body if len(body) == size else None


class OffloadedTracer:
    """Records trajectories through a Tracer that lives in a child process."""

    def __init__(
        self,
        store: str | Path | None = None,
        *,
        otlp_endpoint: str | None = None,
        otlp_headers: Mapping[str, str] | None = None,
        service_name: str = "tracerl",
    ):
        if store is None and otlp_endpoint is None:
            raise ValueError("OffloadedTracer needs a store path, an otlp_endpoint, or both")
        if otlp_endpoint is not None:
            otlp_traces_url(otlp_endpoint)  # a bad URL fails here, not later in the child
        self.store_path = Path(store) if store is not None else None
        self._settings = TracerSettings(str(store) if store is not None else None,
                                        otlp_endpoint, dict(otlp_headers or {}), service_name)
        self._proc = subprocess.Popen(_child_argv(), stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, close_fds=True)
        self._pending: queue.Queue[bytes | None] = queue.Queue(MAX_PENDING)
        self._lock = threading.Lock()
        self._death_lock = threading.Lock()
        self._sent = 0
        self._written = 0
        """Frames the feeder has written to the child (the config frame included)."""
        self._confirmed = 0
        self._child_failures = 0
        self._local_failures = 0
        self._dead = False
        self._closed = False
        self._fallback: Tracer | None = None
        self._pending.put(json.dumps(asdict(self._settings)).encode())
        self._feeder = threading.Thread(target=self._feed, name="tracerl-trace-feeder",
                                        daemon=True)
        self._feeder.start()

    @classmethod
    def for_run(cls, run_dir: str | Path, **kwargs: Any) -> OffloadedTracer:
        """A tracer writing `<run_dir>/traces.sqlite` (the run directory layout)."""
        return cls(Path(run_dir) / STORE_FILENAME, **kwargs)

    @property
    def failures(self) -> int:
        """Trajectories not recorded: unpicklable, failed in the child, or lost with it."""
        fallback = self._fallback.failures if self._fallback is not None else 0
        lost = self._sent - self._confirmed if self._dead else 0
        return self._local_failures + self._child_failures + lost + fallback

    def submit(self, traj: Trajectory, **kwargs: Any) -> None:
        """Queue one finished trajectory (arguments as Tracer.record_trajectory)."""
        if self._closed:
            raise RuntimeError("OffloadedTracer is closed")
        if self._dead:
            self._in_process().submit(traj, **kwargs)
            return
        try:
            frame = pickle.dumps(("traj", traj, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - contained: counted and logged
            self._local_failures += 1
            log.exception("could not pickle trajectory of task %r for tracing", traj.task.id)
            return
        self._sent += 1
        self._pending.put(frame)

    def flush(self, timeout_millis: int = 30000) -> bool:
        """Block until every trajectory submitted so far is exported; False on timeout."""
        if self._dead:
            return self._fallback.flush(timeout_millis) if self._fallback is not None else True
        self._pending.put(pickle.dumps(("flush",)))
        reply = self._reply(timeout_millis / 1000)
        return bool(reply and reply.get("ok"))

    def close(self) -> None:
        """Flush, stop the child and wait for it (the store file stays)."""
        if self._closed:
            return
        self._closed = True
        self._pending.put(None)  # ends the feeder, alive or draining after a death
        if not self._dead:
            self._reply(START_TIMEOUT_S)
        self._feeder.join(timeout=5)
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            log.warning("tracing process %d did not exit; killing it", self._proc.pid)
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        if self._fallback is not None:
            self._fallback.close()

    def __enter__(self) -> OffloadedTracer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ internals

    def _feed(self) -> None:
        """Write queued frames to the child; a None closes its input (end of work)."""
        stdin = self._proc.stdin
        assert stdin is not None
        while True:
            frame = self._pending.get()
            try:
                if frame is None:
                    stdin.close()
                    return
                write_frame(stdin, frame)
                self._written += 1
            except OSError as exc:
                self._died(f"cannot write to it: {exc}")
                while self._pending.get() is not None:  # never leave a submit blocked
                    pass
                return

    def _reply(self, timeout_s: float) -> dict[str, Any] | None:
        """Read the child's next reply (to a flush or to end of input)."""
        stdout = self._proc.stdout
        assert stdout is not None
        with self._lock:
            deadline = time.monotonic() + timeout_s
            ready: list[Any] = []
            while not ready and not self._dead:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning("tracing process did not answer within %.0f s", timeout_s)
                    return None
                ready, _, _ = select.select([stdout], [], [], min(left, 1.0))
                if not ready and self._proc.poll() is not None:
                    break
            frame = read_frame(stdout) if ready else None
            if frame is None:
                self._died(f"it exited with code {self._proc.poll()}")
                return None
            reply = json.loads(frame)
            self._confirmed = int(reply["done"])
            self._child_failures = int(reply["failures"])
            return reply

    def _died(self, why: str) -> None:
        """Record the child's death once, whichever thread (feeder or reader) sees it
        first. The error is logged before `_dead` is set: a thread that sees `_dead` knows
        the failure is already reported."""
        with self._death_lock:
            if self._dead:
                return
            log.error("tracing process failed (%s); %d trajectories not confirmed are "
                      "counted as failures, the rest are traced in-process", why,
                      self._sent - self._confirmed)
            self._dead = True

    def _in_process(self) -> Tracer:
        if self._fallback is None:
            self._fallback = self._settings.tracer()
        return self._fallback


def _child_argv() -> list[str]:
    """The child ignores SIGINT from its first statement: a terminal's Ctrl-C goes to the
    whole process group, and the parent (which handles it) ends the child by closing its
    input once everything submitted is recorded. Killed by it instead, the child would
    print a traceback and take unconfirmed trajectories with it."""
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    boot = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            f"import sys; sys.path.insert(0, {src!r}); "
            "from tracerl.trace.offload import serve; serve()")
    return [sys.executable, "-c", boot]


def serve() -> None:
    """The child: read frames from stdin, record them, answer flushes on stdout."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints must not corrupt the reply stream
    inp = sys.stdin.buffer
    head = read_frame(inp)
    if head is None:
        return
    tracer = TracerSettings(**json.loads(head)).tracer()
    done = unreadable = 0

    def reply(ok: bool) -> None:
        body = {"ok": ok, "done": done, "failures": tracer.failures + unreadable}
        try:
            write_frame(out, json.dumps(body).encode())
        except BrokenPipeError:  # the parent is gone (it crashed or was killed): the
            pass                 # spans are already stored; nobody is left to answer

    while (frame := read_frame(inp)) is not None:
        try:  # e.g. a class defined in the parent's __main__, unknown here
            msg = pickle.loads(frame)
        except Exception:  # noqa: BLE001 - contained: counted, logged to stderr
            unreadable += 1
            done += 1
            log.exception("tracing process could not unpickle a trajectory")
            continue
        if msg[0] == "traj":
            tracer.record_trajectory(msg[1], **msg[2])  # counts its own failures
            done += 1
        elif msg[0] == "flush":
            reply(tracer.flush())
    tracer.close()
    reply(True)

"""SandboxPool: warm workers, one fresh forked process per run, same limits every time.

Each worker is an interpreter started once inside its own namespaces (see
isolation.py and _worker.py). A run sends the job over a Unix socket; the worker forks
a child that applies the limits and runs the code, and reports the result. A worker
that dies or stops answering is killed and replaced; the run it was serving comes
back as `infra_error` (never as a wrong answer).
"""

from __future__ import annotations

import logging
import queue
import select
import socket
import subprocess
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from tracerl.sandbox import _wire
from tracerl.sandbox.isolation import (
    NAMESPACE_LAYERS,
    SCRUBBED_ENV,
    STRICT_LAYERS,
    PidsCgroup,
    namespace_support,
    sandbox_binds,
    sandbox_masks,
    unshare_prefix,
    worker_argv,
)
from tracerl.sandbox.result import (
    ExecResult,
    Isolation,
    Limits,
    SandboxUnavailable,
    infra_error,
)

log = logging.getLogger(__name__)
START_TIMEOUT_S = 30.0
GRACE_S = 5.0
"""How long past a job's own limit the parent waits before declaring the worker hung."""


class _Worker:
    """One warm worker process and the parent's end of its control socket."""

    def __init__(self, isolation: Isolation, limits: Limits, tmp_mb: int,
                 preload: tuple[str, ...], warmup: str = "") -> None:
        parent, child = socket.socketpair()
        prefix = unshare_prefix()
        self.cgroup = PidsCgroup.create(limits.max_procs + 4)
        argv = prefix + worker_argv(child.fileno())
        if self.cgroup is not None:
            argv = self.cgroup.wrap(argv)
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            argv, pass_fds=(child.fileno(),), env=dict(SCRUBBED_ENV), cwd="/",
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
            start_new_session=True,
        )
        child.close()
        self.sock = parent
        self.sock.settimeout(START_TIMEOUT_S)
        cfg = {"private_root": bool(prefix) and namespace_support()[0]["mount_ns"],
               "binds": sandbox_binds(),
               "masks": sandbox_masks(), "tmp_mb": tmp_mb, "preload": list(preload),
               "warmup": warmup}
        why = "no ready message"
        try:
            _wire.send_msg(self.sock, cfg)
            ready, _ = _wire.recv_msg(self.sock)
        except (OSError, _wire.WireError) as exc:
            ready, why = None, f"{type(exc).__name__}: {exc}"
        if not ready:
            tail = self.stderr_tail()
            self.kill()
            raise RuntimeError(f"sandbox worker failed to start ({why}): {tail}")
        self.layers = self._layers(ready["layers"])
        self.notes = {k: str(v) for k, v in ready["layers"].items() if k.endswith("_error")}
        if "preload_error" in self.notes:
            self.kill()
            raise RuntimeError(f"sandbox worker could not preload: {self.notes['preload_error']}")
        if isolation == "strict" and not all(self.layers[k] for k in STRICT_LAYERS):
            self.kill()
            missing = [k for k in STRICT_LAYERS if not self.layers[k]]
            raise SandboxUnavailable(f"isolation='strict' but missing: {', '.join(missing)}")

    def _layers(self, reported: Mapping[str, Any]) -> dict[str, bool]:
        ns, _ = namespace_support()
        prefix = bool(unshare_prefix())
        layers = {k: prefix and ns[k] for k in NAMESPACE_LAYERS}
        layers["net_ns"] = layers["net_ns"] and bool(reported.get("net_ns"))
        layers["pid_ns"] = layers["pid_ns"] and bool(reported.get("pid_ns"))
        layers["private_root"] = bool(reported.get("private_root"))
        layers["cgroup_pids"] = self.cgroup is not None
        layers["rlimits"] = True
        return layers

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()[-2000:].decode("utf-8", "replace").strip() or "(no output)"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def request_kill(self, job_id: str) -> None:
        """Ask the worker to kill job `job_id` now, if it is still the one running."""
        try:
            _wire.send_msg(self.sock, {"kill": job_id})
        except OSError:
            pass

    def kill(self) -> None:
        try:
            self.sock.close()
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log.warning("sandbox worker %d did not exit", self.proc.pid)
            if self.cgroup is not None:
                self.cgroup.remove()
            self.stderr.close()


@dataclass
class Running:
    """A job sent to a worker whose result has not been collected yet."""

    worker: _Worker | None
    job: dict[str, Any]
    started: float
    failed: ExecResult | None = None

    def wait_ended(self, timeout_s: float) -> bool:
        """Wait at most `timeout_s` for the run to end (its report ready to collect):
        one sleep, where a caller reading the child's messages wakes once per message.
        True when it ended (or failed to start); collecting it is still `finish`'s."""
        if self.failed is not None or self.worker is None:
            return True
        ready, _, _ = select.select([self.worker.sock], [], [], timeout_s)
        return bool(ready)


class SandboxPool:
    """Warm sandbox workers; `run_python` has the same contract as the module function.

    Use as a context manager (or call `close()`). Thread-safe: up to `workers` runs go
    at once, further callers wait for a free worker.
    """

    def __init__(
        self,
        workers: int = 2,
        *,
        isolation: Isolation = "best_effort",
        limits: Limits | None = None,
        tmp_mb: int = 256,
        preload: tuple[str, ...] = (),
        warmup: str = "",
    ) -> None:
        if workers < 1:
            raise ValueError(f"SandboxPool.workers must be >= 1, got {workers}")
        if isolation not in ("strict", "best_effort"):
            raise ValueError(f"isolation must be 'strict' or 'best_effort', got {isolation!r}")
        self.isolation: Isolation = isolation
        self.limits = limits or Limits()
        self.tmp_mb = tmp_mb
        self.preload = tuple(preload)
        """Modules every worker imports once at start, so runs fork them ready-made."""
        self.warmup = warmup
        """Trusted code every worker runs once after the preloads, so that runs fork the
        caches it fills (math-verify's parser is slow on its first answer)."""
        self._idle: queue.Queue[_Worker | None] = queue.Queue()
        self._lock = threading.Lock()
        self._closed = False
        self.replaced = 0
        first = self._spawn()
        self.layers = dict(first.layers)
        self.notes = first.notes
        self._idle.put(first)
        for _ in range(workers - 1):
            self._idle.put(self._spawn())
        if self.missing_isolation:
            msg = (f"tracerl sandbox running WITHOUT: {', '.join(self.missing_isolation)} "
                   f"(isolation='best_effort'); run `tracerl doctor` for details")
            warnings.warn(msg, RuntimeWarning, stacklevel=2)
            log.warning(msg)

    def _spawn(self) -> _Worker:
        return _Worker(self.isolation, self.limits, self.tmp_mb, self.preload, self.warmup)

    @property
    def missing_isolation(self) -> tuple[str, ...]:
        return tuple(k for k, ok in self.layers.items() if not ok)

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return
            if worker is not None:
                worker.kill()

    def _acquire(self) -> _Worker | None:
        if self._closed:
            raise RuntimeError("SandboxPool is closed")
        worker = self._idle.get()
        if worker is not None and worker.alive():
            return worker
        if worker is not None:
            worker.kill()
        try:
            self.replaced += 1
            return self._spawn()
        except (RuntimeError, OSError) as exc:
            log.error("could not replace sandbox worker: %s", exc)
            self._idle.put(None)  # keep the slot; the next caller retries the spawn
            return None

    def _release(self, worker: _Worker | None, healthy: bool) -> None:
        if worker is not None and not healthy:
            worker.kill()
            worker = None
        if self._closed and worker is not None:
            worker.kill()
            return
        self._idle.put(worker)

    def limits_for(self, timeout_s: float | None, memory_mb: int | None) -> Limits:
        lim = self.limits
        if timeout_s is not None:
            lim = replace(lim, timeout_s=timeout_s)
        if memory_mb is not None:
            lim = replace(lim, memory_mb=memory_mb)
        return lim

    def job(self, code: str, limits: Limits, **extra: Any) -> dict[str, Any]:
        if not isinstance(code, str):
            raise TypeError(f"code must be str, got {type(code).__name__}")
        return {"id": uuid.uuid4().hex, "code": code, "limits": limits.to_wire(),
                "env": dict(SCRUBBED_ENV),
                "drop_caps": self.layers.get("user_ns", False), **extra}

    def begin(self, job: dict[str, Any], fds: list[int] | None = None,
              wire: bytes | None = None) -> Running:
        """Send a prepared job to a free worker; `finish` collects its result. `wire`:
        the job as encoded by the caller, when it carries more than `job` (a session's
        first request, spliced in already encoded)."""
        start = time.monotonic()
        worker = self._acquire()
        run = Running(worker, job, start)
        if worker is None:
            run.failed = infra_error("no sandbox worker could be started")
            return run
        try:
            worker.sock.settimeout(job["limits"]["timeout_s"] + GRACE_S)
            _wire.send_msg(worker.sock, job if wire is None else wire, fds or [])
        except (OSError, _wire.WireError) as exc:
            run.failed = infra_error(f"sandbox worker failed: {type(exc).__name__}: {exc}")
            self._release(worker, healthy=False)
        return run

    def finish(self, run: Running) -> ExecResult:
        """Wait for a begun job's result and give its worker back to the pool."""
        if run.failed is not None:
            return run.failed
        worker, healthy = run.worker, False
        assert worker is not None
        try:
            raw, _ = _wire.recv_msg(worker.sock)
            if raw is None:
                raise OSError("sandbox worker closed its control socket")
            healthy = raw.get("status") != "infra_error"
            return self._result(raw, time.monotonic() - run.started)
        except (OSError, _wire.WireError) as exc:
            detail = f"{type(exc).__name__}: {exc}; worker stderr: {worker.stderr_tail()}"
            return infra_error(f"sandbox worker failed: {detail}", time.monotonic() - run.started)
        finally:
            self._release(worker, healthy)

    def execute(self, job: dict[str, Any], fds: list[int] | None = None) -> ExecResult:
        """Run one prepared job to completion."""
        return self.finish(self.begin(job, fds))

    def _result(self, raw: dict[str, Any], wall: float) -> ExecResult:
        if raw.get("status") == "infra_error":
            return infra_error(str(raw.get("error")), wall)
        return ExecResult(
            status=raw["status"], returncode=raw["returncode"], stdout=raw["stdout"],
            stderr=raw["stderr"], wall_s=float(raw["wall_s"]),
            missing_isolation=self.missing_isolation,
        )

    def run_python(
        self,
        code: str,
        *,
        stdin: str = "",
        timeout_s: float | None = None,
        memory_mb: int | None = None,
        files: Mapping[str, str | bytes] | None = None,
    ) -> ExecResult:
        """Run `code` as `__main__` in a fresh sandboxed process; never raises for bad code."""
        limits = self.limits_for(timeout_s, memory_mb)
        job = self.job(code, limits, stdin=stdin, files=_encode_files(files or {}))
        return self.execute(job)


def _encode_files(files: Mapping[str, str | bytes]) -> dict[str, str]:
    """Validate relative paths and hex-encode contents for the wire."""
    out: dict[str, str] = {}
    for rel, content in files.items():
        parts = rel.replace("\\", "/").split("/")
        if rel.startswith("/") or ".." in parts or not rel:
            raise ValueError(f"files: {rel!r} must be a relative path inside the work dir")
        data = content.encode() if isinstance(content, str) else bytes(content)
        out[rel] = data.hex()
    return out

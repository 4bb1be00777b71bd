"""Escape attempts: each must be contained by the sandbox on this host."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from tracerl.sandbox import SandboxPool


def requires(pool: SandboxPool, *layers: str) -> None:
    """Skip (loudly, with the reason) where this host lacks an isolation layer."""
    missing = [name for name in layers if not pool.layers.get(name)]
    if missing:
        pytest.skip(f"host lacks isolation layers {missing} (see `tracerl doctor`)")


@pytest.mark.slow  # waits out connect and accept timeouts
def test_cannot_connect_to_a_socket_listening_on_host_loopback(pool: SandboxPool) -> None:
    requires(pool, "net_ns")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    accepted: list[socket.socket] = []
    listener.settimeout(3)
    t = threading.Thread(target=lambda: _accept(listener, accepted), daemon=True)
    t.start()
    code = (f"import socket\ns = socket.socket()\ns.settimeout(1)\n"
            f"try:\n    s.connect(('127.0.0.1', {listener.getsockname()[1]})); print('REACHED')\n"
            f"except OSError as e:\n    print('BLOCKED', e)")
    res = pool.run_python(code, timeout_s=3)
    t.join()
    listener.close()
    assert "BLOCKED" in res.stdout and not accepted


def _accept(listener: socket.socket, out: list[socket.socket]) -> None:
    try:
        out.append(listener.accept()[0])
    except OSError:
        pass


def test_cannot_read_a_secret_from_the_parent_environment(
    pool: SandboxPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    requires(pool, "pid_ns")
    monkeypatch.setenv("TRACERL_TEST_SECRET", "hunter2-secret")
    code = ("import os\nprint(os.environ.get('TRACERL_TEST_SECRET'))\n"
            "import glob\nfor p in glob.glob('/proc/*/environ'):\n"
            "    try: print(open(p, 'rb').read())\n    except OSError: pass")
    res = pool.run_python(code)
    assert "hunter2-secret" not in res.stdout + res.stderr


def test_cannot_write_outside_the_work_dir(pool: SandboxPool, tmp_path: os.PathLike) -> None:
    requires(pool, "private_root")
    target = os.path.join(str(tmp_path), "escaped.txt")
    code = (f"for p in [{target!r}, '/etc/tracerl-escape', '/usr/tracerl-escape']:\n"
            f"    try: open(p, 'w').write('x'); print('WROTE', p)\n"
            f"    except OSError as e: print('DENIED', p)")
    res = pool.run_python(code)
    assert "WROTE" not in res.stdout and not os.path.exists(target)


def test_cannot_read_the_project_or_its_hidden_tests(pool: SandboxPool) -> None:
    requires(pool, "private_root")
    import tracerl

    data = os.path.join(os.path.dirname(tracerl.__file__), "envs", "code", "problems.jsonl")
    res = pool.run_python(f"print(open({data!r}).read()[:50])")
    assert res.status == "error" and "FileNotFoundError" in res.stderr


@pytest.mark.slow  # waits out the run's timeout
def test_fork_bomb_is_contained_and_the_pool_recovers(pool: SandboxPool) -> None:
    bomb = "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass"
    res = pool.run_python(bomb, timeout_s=1)
    assert res.status in ("timeout", "killed")
    assert pool.run_python("print('after')").stdout == "after\n"


def test_killing_the_parent_does_not_kill_the_worker(pool: SandboxPool) -> None:
    requires(pool, "pid_ns")
    code = ("import os, signal\nfor sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):\n"
            "    try: os.kill(os.getppid(), sig)\n    except OSError: pass\nprint('done')")
    pool.run_python(code)
    assert pool.run_python("print('alive')").stdout == "alive\n"


@pytest.mark.slow  # sleeps past the orphan's write
def test_background_processes_are_killed_when_the_run_ends(pool: SandboxPool) -> None:
    requires(pool, "pid_ns", "private_root")
    code = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n"
            "    time.sleep(0.5)\n    open('/tmp/ghost', 'w').write('x')\n    os._exit(0)\n")
    pool.run_python(code)
    res = pool.run_python("import time, os\ntime.sleep(1)\nprint(os.path.exists('/tmp/ghost'))")
    assert res.stdout.strip() == "False"


def test_capabilities_are_dropped(pool: SandboxPool) -> None:
    requires(pool, "user_ns")
    res = pool.run_python("print([l for l in open('/proc/self/status') if l.startswith('CapEff')])")
    assert "0000000000000000" in res.stdout

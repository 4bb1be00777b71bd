"""The isolation half of `tracerl doctor`: what this host really enforces.

Layers are not taken on faith: a worker is started, reports what it managed to set
up, and a probe run then tries to reach a socket this process listens on at
127.0.0.1 and to read a variable planted in this process's environment.
"""

from __future__ import annotations

import os
import socket
import uuid

from tracerl.sandbox.isolation import IsolationReport, namespace_support

_PROBE = """
import os, socket, sys
s = socket.socket()
s.settimeout(1.0)
try:
    s.connect(("127.0.0.1", {port}))
    print("NET_REACHED")
except OSError:
    print("NET_BLOCKED")
print("ENV_LEAK" if {secret!r} in repr(dict(os.environ)) else "ENV_CLEAN")
"""


def isolation_report() -> IsolationReport:
    """Start a sandbox worker, probe it, and report each layer with a reason if missing."""
    from tracerl.sandbox.pool import SandboxPool

    _, notes = namespace_support()
    notes = dict(notes)
    secret = f"tracerl-doctor-{uuid.uuid4().hex}"
    os.environ["TRACERL_DOCTOR_SECRET"] = secret
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        with SandboxPool(workers=1) as pool:
            layers = dict(pool.layers)
            notes.update(pool.notes)
            code = _PROBE.format(port=listener.getsockname()[1], secret=secret)
            res = pool.run_python(code, timeout_s=5)
    finally:
        listener.close()
        del os.environ["TRACERL_DOCTOR_SECRET"]
    if "NET_BLOCKED" not in res.stdout:
        layers["net_ns"] = False
        notes["net_ns"] = f"probe reached the host's 127.0.0.1 ({res.status})"
    layers["scrubbed_env"] = "ENV_CLEAN" in res.stdout
    if not layers["cgroup_pids"]:
        notes["cgroup_pids"] = "no writable pids cgroup (run as root with cgroups mounted)"
    return IsolationReport(layers=layers, notes=notes)

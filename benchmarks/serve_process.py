"""`tracerl serve tiny` as a process of its own, for the serve benchmarks: started on a
free port with one torch thread, and waited for until GET /v1/models answers."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from tracerl.serve.server import bind


def start(*options: str, src: str | None = None, capture: bool = True
          ) -> tuple[subprocess.Popen[str], str]:
    """The server process (with `options` after `tracerl serve tiny threads=1`) and its
    base URL, once it answers. `src`: a src/ directory to run instead of this one
    (a baseline); `capture`: keep its log on stdout (else discarded)."""
    with bind() as sock:
        port = sock.getsockname()[1]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if src is not None:
        env["PYTHONPATH"] = src
    out = subprocess.PIPE if capture else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "tracerl.cli", "serve", "tiny", "threads=1", "--port",
         str(port), *options], stdout=out, stderr=subprocess.STDOUT, text=True, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/models").status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"{url} did not come up")

"""`tracerl view`: arguments, start-up errors, and a light `--help`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

from tracerl.cli import main
from tracerl.cli.view import bind, url_of


def test_a_path_that_is_not_a_run_directory_is_a_message(tmp_path, capsys):
    assert main(["view", str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_a_port_in_use_is_a_message(tmp_path, capsys):
    (tmp_path / "config.yaml").write_text("name: r\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["view", str(tmp_path), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "--port" in err


def test_port_zero_binds_a_free_port_on_loopback():
    sock = bind("127.0.0.1", 0)
    try:
        host, port = sock.getsockname()[:2]
        assert host == "127.0.0.1" and port > 0 and url_of(sock) == f"http://127.0.0.1:{port}/"
    finally:
        sock.close()


def test_help_loads_neither_the_server_nor_torch():
    code = ("import json, sys\nfrom tracerl.cli import main\ntry:\n    main(['view', '--help'])\n"
            "except SystemExit:\n    pass\nprint(json.dumps(sorted(m for m in sys.modules if "
            "m.split('.')[0] in ('torch', 'uvicorn', 'starlette', 'opentelemetry'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert "127.0.0.1" in out and json.loads(out.splitlines()[-1]) == []

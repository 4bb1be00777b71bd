import argparse
import subprocess
import sys
import time

import httpx
import pytest

from tracerl.cli import build_parser
from tracerl.cli.args import ON_MISMATCH
from tracerl.cli.serve import run
from tracerl.serve.episodes import OnMismatch
from tracerl.serve.server import bind


def test_the_cli_names_every_mismatch_policy():
    assert set(ON_MISMATCH) == set(OnMismatch.__args__)


def args(*argv):
    return build_parser().parse_args(["serve", *argv])


@pytest.mark.parametrize("argv, message", [
    (("no/such/dir",), "neither a run directory"),
    (("tiny", "--out", "x"), "--out writes the learner's checkpoints"),
    (("tiny", "rl.nope=1"), "rl.nope"),
    (("tiny", "--max-body-mb", "0"), "--max-body-mb"),
    (("tiny", "--max-anonymous", "0"), "--max-anonymous"),
])
def test_bad_arguments_exit_2(argv, message, capsys):
    assert run(args(*argv)) == 2
    assert message in capsys.readouterr().err


def _models(url: str) -> dict:
    """GET /models once the server answers (it loads its model first)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return httpx.get(f"{url}/models").json()
        except httpx.ConnectError:
            assert time.monotonic() < deadline
            time.sleep(0.1)


@pytest.mark.slow  # a server process
def test_tracerl_serve_answers_on_its_port(tmp_path):
    with bind() as sock:
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "tracerl.cli", "serve", "tiny",
                             "tiny.hidden_size=64", "tiny.heads=2", "tiny.intermediate_size=128",
                             "--port", str(port), "--max-body-mb", "0.05"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = iter(proc.stdout.readline, "")  # a load warning may come first
        assert any("as model 'tiny' on http://127.0.0.1:" in line for line in lines)
        url = f"http://127.0.0.1:{port}/v1"
        assert _models(url)["data"][0]["id"] == "tiny"
        r = httpx.post(f"{url}/chat/completions", json={
            "model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3})
        assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] <= 3
        r = httpx.post(f"{url}/chat/completions", json={
            "model": "tiny", "messages": [{"role": "user", "content": "x" * 60_000}]})
        assert r.status_code == 413  # --max-body-mb 0.05
    finally:
        proc.terminate()
        proc.wait(30)


def test_serve_help_is_light():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert "--on-mismatch" in sub.choices["serve"].format_help()


@pytest.mark.slow  # a server process
def test_port_0_prints_the_bound_port_and_train_says_where_updates_go():
    proc = subprocess.Popen([sys.executable, "-m", "tracerl.cli", "serve", "tiny",
                             "tiny.hidden_size=64", "tiny.heads=2", "tiny.intermediate_size=128",
                             "--port", "0", "--train"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = iter(proc.stdout.readline, "")
        served = next(line for line in lines if "as model 'tiny' on http://127.0.0.1:" in line)
        port = int(served.split("http://127.0.0.1:")[1].split("/")[0])
        assert port != 0
        assert "discarded at exit; pass --out RUN_DIR" in next(lines)
        assert _models(f"http://127.0.0.1:{port}/v1")["data"][0]["id"] == "tiny"
    finally:
        proc.terminate()
        proc.wait(30)

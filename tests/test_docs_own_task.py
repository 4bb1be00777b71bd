"""docs/own-task.md runs as written: its file, its shell commands and its Python."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "own-task.md"
BLOCK = re.compile(r"```(\w+)([^\n]*)\n(.*?)```", re.S)

pytestmark = pytest.mark.slow  # trains twice and evaluates (about half a minute)


def blocks() -> list[tuple[str, str, str]]:
    return [(lang, info.strip(), body) for lang, info, body in BLOCK.findall(DOC.read_text())]


TRACERL = Path(sys.executable).parent / "tracerl"
"""The console script a user runs (not `python -m`, which would find the page's module
in the current directory by itself)."""


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    # as from a fresh shell: the environment as it is; nothing adds the directory
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_the_page_has_a_file_commands_and_python():
    kinds = [(lang, info) for lang, info, _ in blocks()]
    assert ("python", "file=units_task.py") in kinds
    assert sum(lang == "bash" for lang, _ in kinds) >= 2
    assert ("python", "") in kinds


def test_the_own_task_page_runs_as_written(tmp_path):
    assert TRACERL.is_file(), "the tracerl console script is not installed (pip install -e .)"
    assert str(tmp_path) not in os.environ.get("PYTHONPATH", "")
    for lang, info, body in blocks():
        if info.startswith("file="):
            (tmp_path / info.removeprefix("file=")).write_text(body)
            continue
        if lang == "bash":
            command = shlex.split(body.replace("\\\n", " "))
            assert command[0] == "tracerl"
            done = _run([str(TRACERL), *command[1:]], tmp_path)
        else:
            done = _run([sys.executable, "-c", body], tmp_path)
        assert done.returncode == 0, f"{body}\n{done.stdout}\n{done.stderr}"
        if command[1:2] == ["train"] and lang == "bash":
            assert '"success_after"' in done.stdout
        if command[1:2] == ["eval"] and lang == "bash":
            assert "pass@1" in done.stdout and "pass@2" in done.stdout
    config = (tmp_path / "runs" / "units" / "config.yaml").read_text()
    assert "family: units_task:UnitsFamily" in config
    assert (tmp_path / "runs" / "units-py" / "summary.json").is_file()
    # the Python run recorded its family so `tracerl eval` can rebuild it too
    assert "family: units_task:UnitsFamily" in (tmp_path / "runs" / "units-py" /
                                               "config.yaml").read_text()

"""`tracerl doctor`'s isolation report and its CLI entry points."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest

from tracerl.cli.doctor import add_arguments, run
from tracerl.sandbox import IsolationReport, isolation_report


@pytest.fixture(scope="module")
def report() -> IsolationReport:
    return isolation_report()


def test_report_covers_every_layer(report: IsolationReport) -> None:
    expected = {"user_ns", "net_ns", "pid_ns", "mount_ns", "private_root", "cgroup_pids",
                "rlimits", "scrubbed_env"}
    assert expected <= set(report.layers)


def test_missing_layers_come_with_a_reason_or_none_are_missing(report: IsolationReport) -> None:
    assert all(name in report.notes for name in report.missing
               if name in ("user_ns", "net_ns", "pid_ns", "mount_ns", "cgroup_pids"))


def test_cli_exit_code_matches_strict_availability(
    report: IsolationReport, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    code = run(parser.parse_args(["--json"]))
    out = json.loads(capsys.readouterr().out)
    assert code == (0 if out["strict_ok"] else 1) and out["strict_ok"] == report.strict_ok


def test_module_entry_point_prints_a_table() -> None:
    proc = subprocess.run([sys.executable, "-m", "tracerl.cli.doctor"],
                          capture_output=True, text=True, timeout=60)
    assert "isolation='strict'" in proc.stdout

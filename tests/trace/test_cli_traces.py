"""`tracerl traces list|show|export`, called through add_arguments/run and `python -m`."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from tracerl.trace import Tracer
from tracerl.trace.cli_traces import add_arguments, run


@pytest.fixture
def run_dir(tmp_path, build_trajectory):
    with Tracer.for_run(tmp_path) as tracer:
        tracer.record_trajectory(build_trajectory(reward=1.0), run="exp", step=0)
        tracer.record_trajectory(build_trajectory(reward=0.0, sample=1, broken_tool=False),
                                 run="exp", step=0)
    return tmp_path


def _cli(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = io.StringIO()
    return run(parser.parse_args(list(argv)), out=out), out.getvalue()


def test_list_prints_a_table_of_trajectories(run_dir):
    code, out = _cli("list", str(run_dir))
    lines = out.splitlines()
    assert code == 0 and lines[0].split()[:3] == ["trace_id", "run", "step"]
    assert len(lines) == 4


def test_list_filters_by_tool_as_json(run_dir):
    code, out = _cli("list", str(run_dir), "--tool", "lookup", "--json")
    assert [json.loads(line)["reward"] for line in out.splitlines()] == [1.0]


def test_list_runs(run_dir):
    _, out = _cli("list", str(run_dir), "--runs")
    assert out.splitlines()[2].split()[:3] == ["exp", "2", "1"]


def test_show_prints_the_span_tree(run_dir):
    _, listing = _cli("list", str(run_dir), "--json", "--min-reward", "1")
    trace_id = json.loads(listing)["trace_id"]
    code, out = _cli("show", str(run_dir), trace_id[:8])
    assert code == 0
    assert out.splitlines()[0].startswith("AGENT trajectory")
    assert "  TOOL lookup" in out and "ERROR tool_raised" in out


def test_export_openai_conversations(run_dir, tmp_path):
    out_file = tmp_path / "c.jsonl"
    assert _cli("export", str(run_dir), "--format", "openai", "--out", str(out_file))[0] == 0
    records = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [r["reward"] for r in records] == [1.0, 0.0]
    assert records[0]["messages"][-1] == {"role": "assistant", "content": "The answer is 42."}


def test_export_otlp_json(run_dir):
    _, out = _cli("export", str(run_dir), "--format", "otlp", "--max-reward", "0")
    request = json.loads(out)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(spans) == 6 and all(len(s["traceId"]) == 32 for s in spans)


def test_missing_store_exits_2(tmp_path):
    assert _cli("list", str(tmp_path / "none.sqlite"))[0] == 2


def test_python_dash_m_entry_point(run_dir):
    proc = subprocess.run([sys.executable, "-m", "tracerl.trace.cli_traces", "list",
                           str(run_dir), "--runs"], capture_output=True, text=True, check=True)
    assert "exp" in proc.stdout

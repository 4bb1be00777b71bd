"""`tracerl traces list|show|export`, called through add_arguments/run and `python -m`."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from tracerl.cli.traces import add_arguments, run
from tracerl.guard.pipeline import Guard
from tracerl.trace import GuardrailRecord, Tracer


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


def _trace_id(run_dir, *filters: str) -> str:
    _, listing = _cli("list", str(run_dir), "--json", *filters)
    return json.loads(listing)["trace_id"]


def test_show_renders_the_conversation(run_dir):
    code, out = _cli("show", str(run_dir), _trace_id(run_dir, "--min-reward", "1")[:8])
    assert code == 0
    for block in ("[system]\n  You can call tools.", "[user]\n  What is 6*7?",
                  "[assistant] turn 0", '-> calculator {"expr": "6*7"}',
                  "[tool] calculator: ok\n  42",
                  "[tool] lookup: error (tool_raised)\n  error: no such key",
                  "[assistant] turn 1\n  The answer is 42."):
        assert block in out
    assert "<tool_call>" not in out  # the call is shown parsed, not as markup
    outcome = out[out.index("--- outcome ---"):]
    assert "status     done" in outcome and "reward     1  (correct 1, format unjudged)" in outcome
    assert "action tokens -0.5 .. +0.5)" in outcome  # the advantage's range, not only its mean
    assert "\033[" not in out  # not a terminal: no colour codes


def test_show_colour_is_opt_in_off_a_terminal(run_dir):
    _, out = _cli("show", str(run_dir), _trace_id(run_dir, "--min-reward", "1"),
                  "--color", "always")
    assert "\033[1;32m[assistant]\033[0m" in out


def test_show_without_an_id_shows_the_latest_matching_and_says_so(run_dir):
    _, out = _cli("show", str(run_dir))
    assert out.startswith("(the latest of 2 matching trajectories")
    assert "sample 1" in out and "lookup" not in out
    _, only = _cli("show", str(run_dir), "--min-reward", "1")
    assert only.startswith("trajectory ") and "sample 0" in only


def test_show_lists_the_guard_decisions_that_acted(tmp_path, build_trajectory):
    guard = Guard()
    records = [GuardrailRecord(guard.check_tool_call("bash", {"command": "rm -rf /"}), 0),
               GuardrailRecord(guard.check_observation("all good"), 0)]
    with Tracer.for_run(tmp_path) as tracer:
        tracer.record_trajectory(build_trajectory(), run="exp", guardrails=records)
    _, out = _cli("show", str(tmp_path))
    assert out.count("[guard]") == 1 and "[guard] block tool_call of bash" in out


def test_show_spans_prints_the_span_tree(run_dir):
    code, out = _cli("show", str(run_dir), _trace_id(run_dir, "--min-reward", "1"), "--spans")
    assert code == 0
    assert out.splitlines()[0].startswith("AGENT trajectory")
    assert "  TOOL lookup" in out and "ERROR tool_raised" in out


def test_show_attributes_prints_the_raw_values(run_dir):
    _, out = _cli("show", str(run_dir), _trace_id(run_dir, "--min-reward", "1"), "--attributes")
    assert 'rl.turn.action_ids = "[11,12,13]"' in out


def test_show_with_no_match_exits_2(run_dir, capsys):
    assert _cli("show", str(run_dir), "--min-reward", "5")[0] == 2
    assert "no trajectory" in capsys.readouterr().err


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
    proc = subprocess.run([sys.executable, "-m", "tracerl.cli.traces", "list",
                           str(run_dir), "--runs"], capture_output=True, text=True, check=True)
    assert "exp" in proc.stdout


def test_list_limit_keeps_the_latest_the_one_show_picks(run_dir):
    _, listed = _cli("list", str(run_dir), "--limit", "1", "--json")
    (row,) = [json.loads(line) for line in listed.splitlines()]
    _, shown = _cli("show", str(run_dir))
    assert row["sample_index"] == 1 and f"trajectory {row['trace_id']}" in shown

"""`tracerl eval` through add_arguments/run and `python -m`."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from tracerl.cli.eval import add_arguments, parse_metric, run
from tracerl.evals.metrics import ToolSelection
from tracerl.trace import Tracer


@pytest.fixture
def jsonl(tmp_path):
    path = tmp_path / "c.jsonl"
    rows = [{"id": "a", "answer": "Paris", "messages": [
                {"role": "user", "content": "Capital of France?"},
                {"role": "assistant", "content": "Paris"}]},
            {"id": "b", "answer": "Rome", "messages": [
                {"role": "user", "content": "Capital of Italy?"},
                {"role": "assistant", "content": "Milan"}]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _cli(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out = io.StringIO()
    return run(parser.parse_args(list(argv)), out=out), out.getvalue()


def test_table_output(jsonl):
    code, out = _cli(str(jsonl), "--metric", "exact_match", "--metric", "edit_similarity")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("exact_match"))
    assert row.split()[1] == "0.5"


def test_json_output_and_file(jsonl, tmp_path):
    out_file = tmp_path / "r.json"
    code, out = _cli(str(jsonl), "--metric", "contains", "--json", "--out", str(out_file))
    assert json.loads(out)["aggregates"]["contains"]["mean"] == 0.5
    assert json.loads(out_file.read_text()) == json.loads(out)


def test_trace_store_input(tmp_path, make_trajectory):
    with Tracer.for_run(tmp_path) as tracer:
        tracer.record_trajectory(make_trajectory(("42", []), answer="42"), run="r")
    code, out = _cli(str(tmp_path), "--run", "r", "--metric", "numeric_match", "--json")
    assert json.loads(out)["aggregates"]["numeric_match"]["mean"] == 1.0


def test_metric_spec_with_options():
    metric = parse_metric("tool_selection:required=search|fetch,forbidden=rm",
                          argparse.Namespace())
    assert metric == ToolSelection(required=("search", "fetch"), forbidden=("rm",))


def test_metric_spec_reads_json_file(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "object"}')
    assert parse_metric(f"json_schema:schema=@{schema}", argparse.Namespace()).schema == {
        "type": "object"}


def test_unknown_metric_exits_2(jsonl, capsys):
    assert _cli(str(jsonl), "--metric", "vibes")[0] == 2
    assert "unknown metric 'vibes'" in capsys.readouterr().err


def test_bad_metric_option_exits_2(jsonl, capsys):
    assert _cli(str(jsonl), "--metric", "bleu:colour=red")[0] == 2
    assert "metric 'bleu'" in capsys.readouterr().err


def test_no_metric_exits_2(jsonl):
    assert _cli(str(jsonl))[0] == 2


def test_python_dash_m_entry_point(jsonl):
    proc = subprocess.run([sys.executable, "-m", "tracerl.cli.eval", str(jsonl),
                           "--metric", "rouge_l"], capture_output=True, text=True, check=True)
    assert proc.stdout.startswith("metric")


def test_new_catalogue_metrics_by_name(jsonl):
    code, out = _cli(str(jsonl), "--metric", "chrf", "--metric", "contains_all:phrases=paris",
                     "--metric", "length:max_len=10")
    assert code == 0 and "chrf" in out and "contains_all" in out


def test_breakdown_by_tag_and_baseline_comparison(tmp_path):
    def write(name: str, answers: list[str]) -> str:
        path = tmp_path / name
        rows = [{"id": str(i), "answer": "yes", "tags": ["even" if i % 2 == 0 else "odd"],
                 "messages": [{"role": "user", "content": "?"},
                              {"role": "assistant", "content": a}]}
                for i, a in enumerate(answers)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(path)

    old, new = write("old.jsonl", ["no"] * 8), write("new.jsonl", ["yes"] * 8)
    base = tmp_path / "base.json"
    assert _cli(old, "--metric", "exact_match", "--out", str(base))[0] == 0
    code, out = _cli(new, "--metric", "exact_match", "--by", "tag", "--baseline", str(base))
    assert code == 0
    assert out.splitlines()[0].split()[:2] == ["tag", "metric"] and "odd" in out
    assert "paired sign-flip" in out and "0.007812" in out  # 2 / 2^8: all 8 items better
    code, full = _cli(new, "--metric", "exact_match", "--baseline", str(base), "--json")
    assert json.loads(full)["comparison"]["metrics"][0]["wins"] == 8


def test_bad_baseline_is_a_clear_error(jsonl, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert _cli(str(jsonl), "--metric", "exact_match", "--baseline", str(bad))[0] == 2
    assert "--baseline" in capsys.readouterr().err


def test_exact_match_at_zero_hints_at_the_label_and_prefix_drops_it(tmp_path):
    path = tmp_path / "calc.jsonl"
    path.write_text(json.dumps({"answer": "42", "messages": [
        {"role": "user", "content": "6*7?"}, {"role": "assistant", "content": "Answer: 42"}]}))
    code, out = _cli(str(path), "--metric", "exact_match")
    assert code == 0 and "exact_match:prefix=Answer:" in out and "numeric_match" in out
    code, out = _cli(str(path), "--metric", "exact_match:prefix=Answer:", "--json")
    assert json.loads(out)["aggregates"]["exact_match"]["mean"] == 1.0


def test_a_metric_missing_its_required_option_says_how_to_give_it(jsonl, capsys):
    assert _cli(str(jsonl), "--metric", "tool_call_validity")[0] == 2
    err = capsys.readouterr().err
    assert "needs the option schemas: --metric tool_call_validity:schemas=..." in err
    assert "TypeError" not in err and "positional argument" not in err


def test_bfcl_family_report_is_printed_and_written(tmp_path):
    from tracerl.cli.eval import main
    from tracerl.policy.model import TinySpec, write_tiny

    model = write_tiny(tmp_path / "tiny", TinySpec(hidden_size=32, layers=1, heads=2,
                                                   intermediate_size=64), 0)
    out = tmp_path / "bfcl.json"
    code = main([str(model), "rl.max_turns=2", "rl.max_turn_tokens=8", "--family", "bfcl",
                 "--categories", "simple_python", "irrelevance", "--tasks-per-category", "2",
                 "--temperature", "0", "--out", str(out)])
    assert code == 0
    report = json.loads(out.read_text())
    assert [c["category"] for c in report["categories"]] == ["simple_python", "irrelevance"]
    assert all(c["entries"] == 2 for c in report["categories"])
    assert report["split"] == "heldout" and "Irrelevance" in report["sections"]

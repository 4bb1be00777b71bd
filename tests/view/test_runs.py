"""Reading a run directory that another process may still be writing."""

from __future__ import annotations

import pytest

from tracerl.view.runs import RunFiles, check_run_dir, read_records


def test_a_half_written_last_line_waits_and_a_bad_line_is_counted(tmp_path):
    path = tmp_path / "metrics.jsonl"
    path.write_text('{"stage": "rl", "step": 1}\nnot json\n[1, 2]\n\n{"stage": "rl", "st')
    records = read_records(path)
    assert records.records == ({"stage": "rl", "step": 1},) and records.skipped == 2
    assert read_records(tmp_path / "missing.jsonl").records == ()


def test_a_directory_that_is_not_a_run_is_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="not a directory"):
        check_run_dir(tmp_path / "nope")
    with pytest.raises(ValueError, match="not a run directory"):
        check_run_dir(tmp_path)


def test_a_run_without_traces_or_summary_yet(tmp_path):
    (tmp_path / "config.yaml").write_text("name: early\nmodel: tiny\n")
    run = RunFiles(tmp_path)
    assert (run.name, run.summary(), run.store()) == ("early", None, None)
    (tmp_path / "config.yaml").write_text("name: [unclosed\n")
    assert run.name == tmp_path.name  # an unreadable config falls back to the directory

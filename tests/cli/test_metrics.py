"""`tracerl metrics`: the catalogue as a table, per family, and as JSON."""

from __future__ import annotations

import argparse
import io
import json

from tracerl.cli.args import add_metrics_arguments
from tracerl.cli.metrics import run
from tracerl.evals.catalogue import CATALOGUE


def _cli(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser()
    add_metrics_arguments(parser)
    out = io.StringIO()
    return run(parser.parse_args(list(argv)), out=out), out.getvalue()


def test_table_lists_every_metric_with_inputs_and_range():
    code, out = _cli()
    assert code == 0
    assert out.splitlines()[0].split() == ["metric", "family", "range", "kind", "inputs"]
    for e in CATALOGUE:
        assert f"\n{e.name} " in out
    assert f"{len(CATALOGUE)} metrics" in out


def test_family_filter_and_descriptions():
    code, out = _cli("--family", "retrieval", "-v")
    assert code == 0 and "ndcg" in out and "exact_match" not in out
    assert "ndcg: nDCG@k with graded relevance" in out


def test_json_output():
    code, out = _cli("--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) == len(CATALOGUE)
    sem = next(r for r in rows if r["name"] == "semantic_similarity")
    assert (sem["kind"], sem["extra"], sem["range"]) == ("model", "semantic", "[0, 1]")

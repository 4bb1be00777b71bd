"""The BFCL-style report: per-category accuracy, BFCL's section summaries and weights."""

import json

import pytest

from tracerl.envs.bfcl.report import bfcl_report


def test_sections_follow_bfcl_weighting():
    rows = ([("simple_python", f"s{i}", i < 3) for i in range(4)]      # 75
            + [("multiple", "m0", False)]                               # 0
            + [("live_simple", "l0", True)]                             # 100, 1 entry
            + [("live_multiple", f"lm{i}", i == 0) for i in range(3)]   # 33.3, 3 entries
            + [("irrelevance", "i0", True), ("live_irrelevance", "li0", False)]
            + [("multi_turn_base", "b0", True), ("multi_turn_base", "b0", False)])
    r = bfcl_report(rows, "m", "heldout", 2)
    assert r.sections["Non-Live AST"] == pytest.approx(37.5)        # unweighted
    assert r.sections["Live AST"] == pytest.approx(50.0)            # by entries: 2 of 4
    assert r.sections["Irrelevance"] == pytest.approx(50.0)
    assert r.sections["Multi-Turn"] == pytest.approx(50.0)
    assert "Relevance" not in r.sections                            # absent, not 0
    assert r.overall == pytest.approx((37.5 * 10 + 50 * 10 + 50 * 10 + 50 * 30) / 60)
    mt = next(c for c in r.categories if c.category == "multi_turn_base")
    assert (mt.entries, mt.samples) == (1, 2)
    assert json.loads(r.to_json())["categories"][0]["category"] == "simple_python"
    assert "Multi-Turn" in r.table() and "not the leaderboard" in r.table()

"""compare(): pairing by item id and the paired sign-flip test, by hand."""

from __future__ import annotations

import random
import sys

import pytest

from tracerl.evals.compare import compare, sign_flip_p_value
from tracerl.evals.evaluate import EvalReport, ItemResult, MetricSummary


def _report(scores: dict[str, float | None], metric: str = "m") -> EvalReport:
    items = tuple(ItemResult(i, {metric: s}, {metric: None}) for i, s in scores.items())
    summary = MetricSummary(metric, None, None, 0, 0, 0, None)
    return EvalReport(items, {metric: summary}, ())


@pytest.mark.parametrize(("diffs", "p"), [
    ([1, 1, 1], 2 / 8),          # only all-plus and all-minus reach |sum| = 3
    ([1] * 6, 2 / 64),
    ([1, -1], 1.0),
    ([0, 0, 0], 1.0),            # no difference at all
    ([2, 1], 2 / 4),             # |+-2 +-1| >= 3 for ++ and --
    # sums of +-3 +-1 +-0.5: +-4.5, +-3.5, +-2.5, +-1.5; observed 2.5; 6 of 8 reach it
    ([3, -1, 0.5], 6 / 8),
])
def test_exact_p_values(diffs, p):
    got, exact = sign_flip_p_value(diffs)
    assert exact and got == pytest.approx(p)


def test_monte_carlo_agrees_with_the_exact_test(monkeypatch):
    rng = random.Random(0)
    diffs = [rng.choice((-1.0, 0.5, 1.0, 0.25)) for _ in range(14)]
    exact, was_exact = sign_flip_p_value(diffs)
    monkeypatch.setattr(sys.modules["tracerl.evals.compare"], "EXACT_MAX", 0)
    estimate, was_exact_mc = sign_flip_p_value(diffs, samples=20_000, seed=1)
    assert was_exact and not was_exact_mc
    assert estimate == pytest.approx(exact, abs=0.015)


def test_monte_carlo_p_value_is_never_zero():
    p, exact = sign_flip_p_value([1.0] * 40, samples=999)
    assert not exact and p == pytest.approx(1 / 1000)


def test_compare_pairs_items_by_id_and_skips_unscored():
    a = _report({"x": 0.0, "y": 0.0, "z": 1.0, "w": 0.0, "only_a": 1.0})
    b = _report({"x": 1.0, "y": 1.0, "z": 1.0, "w": None, "only_b": 0.0})
    result = compare(a, b)
    [m] = result.metrics
    assert (m.pairs, m.wins, m.losses) == (3, 2, 0)
    assert (m.mean_a, m.mean_b, m.diff) == pytest.approx((1 / 3, 1.0, 2 / 3))
    assert m.p_value == pytest.approx(2 / 4) and m.exact
    assert (result.only_a, result.only_b) == (1, 1)
    assert "unpaired items left out: 1 only in a, 1 only in b" in result.table()


def test_significant_improvement_is_flagged():
    a = _report({str(i): 0.0 for i in range(8)})
    b = _report({str(i): 1.0 for i in range(8)})
    [m] = compare(a, b).metrics
    assert m.p_value == pytest.approx(2 / 256)
    assert compare(a, b).table().splitlines()[2].split()[-1] == "yes"


def test_compare_needs_shared_metrics_and_unique_ids():
    with pytest.raises(ValueError, match="share no metric"):
        compare(_report({"x": 1.0}, "m"), _report({"x": 1.0}, "n"))
    twice = EvalReport((ItemResult("x", {"m": 1.0}, {}), ItemResult("x", {"m": 0.0}, {})),
                       {"m": MetricSummary("m", None, None, 0, 0, 0, None)}, ())
    with pytest.raises(ValueError, match="repeats an item id"):
        compare(twice, twice)

"""Compare two evaluate() reports item by item, with a paired significance test.

Two runs over the same items (a baseline and a candidate checkpoint, two prompts, two
reward settings) are compared on the items both scored, pairing each item with itself:
the per-item difference removes the variation between items, which an unpaired
comparison of two means would leave in the noise.

The test is the paired sign-flip permutation test (Fisher, 1935; see e.g. Good,
"Permutation Tests", 2000): under the null hypothesis that the two runs are
exchangeable on every item, each difference is as likely to have either sign, so the
p-value is the share of the 2^n sign assignments whose mean difference is at least as
far from 0 as the one observed (two-sided). It assumes nothing about the distribution
of the scores (pass/fail and bounded scores are far from normal). With at most
`EXACT_MAX` non-zero differences every assignment is enumerated; beyond, `samples`
random assignments estimate it, with the (count + 1) / (samples + 1) correction that
keeps a Monte Carlo p-value valid (Phipson & Smyth, 2010).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tracerl.evals.evaluate import EvalReport
from tracerl.util.table import format_table

EXACT_MAX = 16
_TOL = 1e-12


@dataclass(frozen=True)
class MetricComparison:
    name: str
    pairs: int
    """Items scored (not None) by both reports."""
    mean_a: float | None
    mean_b: float | None
    """Means over the paired items."""
    diff: float | None
    """mean_b - mean_a."""
    p_value: float | None
    """Two-sided paired sign-flip test; None with no pairs."""
    wins: int
    """Items where b scored higher."""
    losses: int
    exact: bool


@dataclass(frozen=True)
class Comparison:
    metrics: tuple[MetricComparison, ...]
    only_a: int
    """Items only report a has (left out of the pairing)."""
    only_b: int
    alpha: float = 0.05

    def table(self) -> str:
        headers = ["metric", "pairs", "mean_a", "mean_b", "diff", "p_value", "wins", "losses",
                   "significant"]
        rows = [[m.name, m.pairs, m.mean_a, m.mean_b, m.diff, m.p_value, m.wins, m.losses,
                 "yes" if m.p_value is not None and m.p_value < self.alpha else "no"]
                for m in self.metrics]
        text = format_table(headers, rows)
        if self.only_a or self.only_b:
            text += f"\n\nunpaired items left out: {self.only_a} only in a, {self.only_b} only in b"
        return text


def sign_flip_p_value(diffs: Sequence[float], samples: int = 10_000, seed: int = 0
                      ) -> tuple[float, bool]:
    """(two-sided p-value, exact?) of the paired sign-flip test on `diffs`."""
    d = np.asarray([x for x in diffs if abs(x) > _TOL], dtype=np.float64)
    if d.size == 0:
        return 1.0, True
    observed = abs(d.sum())
    if d.size <= EXACT_MAX:
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=d.size)))  # (2^n, n)
        hits = int((np.abs(signs @ d) >= observed - _TOL).sum())
        return hits / len(signs), True
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    while done < samples:
        chunk = min(samples - done, max(1, 2_000_000 // d.size))
        signs = rng.choice((-1.0, 1.0), size=(chunk, d.size))  # (chunk, n)
        hits += int((np.abs(signs @ d) >= observed - _TOL).sum())
        done += chunk
    return (hits + 1) / (samples + 1), False


def _compare_metric(name: str, a: dict[str, float | None], b: dict[str, float | None],
                    samples: int, seed: int) -> MetricComparison:
    ids = [i for i in a if i in b and a[i] is not None and b[i] is not None]
    xa = [float(a[i]) for i in ids]  # type: ignore[arg-type]
    xb = [float(b[i]) for i in ids]  # type: ignore[arg-type]
    if not ids:
        return MetricComparison(name, 0, None, None, None, None, 0, 0, True)
    diffs = [y - x for x, y in zip(xa, xb, strict=True)]
    p, exact = sign_flip_p_value(diffs, samples, seed)
    mean_a, mean_b = math.fsum(xa) / len(ids), math.fsum(xb) / len(ids)
    return MetricComparison(name, len(ids), mean_a, mean_b, mean_b - mean_a, p,
                            sum(x > _TOL for x in diffs), sum(x < -_TOL for x in diffs), exact)


def compare(a: EvalReport, b: EvalReport, *, samples: int = 10_000, seed: int = 0,
            alpha: float = 0.05) -> Comparison:
    """Compare report `b` against baseline `a` on every metric both have, pairing items
    by id; items scored by one side only are counted and left out."""
    ids_a = {r.id for r in a.items}
    ids_b = {r.id for r in b.items}
    if len(ids_a) != len(a.items) or len(ids_b) != len(b.items):
        raise ValueError("compare pairs items by id, and a report repeats an item id")
    shared = [m for m in a.aggregates if m in b.aggregates]
    if not shared:
        raise ValueError(f"the reports share no metric (a: {sorted(a.aggregates)}, "
                         f"b: {sorted(b.aggregates)})")
    out = []
    for m in shared:
        sa = {r.id: r.scores.get(m) for r in a.items}
        sb = {r.id: r.scores.get(m) for r in b.items}
        out.append(_compare_metric(m, sa, sb, samples, seed))
    return Comparison(tuple(out), len(ids_a - ids_b), len(ids_b - ids_a), alpha)

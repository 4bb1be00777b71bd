"""Exact binomial intervals and recall at a fixed false-alarm rate (issue 31)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _log_pmf(n: int, p: float) -> np.ndarray:
    k = np.arange(n + 1)
    lf = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1)))))
    with np.errstate(divide="ignore", invalid="ignore"):
        return lf[n] - lf[k] - lf[n - k] + k * np.log(p) + (n - k) * np.log1p(-p)


def _tail_at_least(k: int, n: int, p: float) -> float:
    return float(np.exp(_log_pmf(n, p)[k:]).sum())


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The exact (Clopper-Pearson) 1 - alpha interval of a rate of k in n, by bisection
    on the binomial tails."""
    if n == 0:
        return 0.0, 1.0

    def solve(f, target: float) -> float:  # f increasing in p
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) < target else (lo, mid)
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(lambda p: _tail_at_least(k, n, p), alpha / 2)
    # P(X <= k) falls in p: solve 1 - P(X <= k) = P(X >= k + 1) rising to 1 - alpha/2
    high = 1.0 if k == n else solve(lambda p: _tail_at_least(k + 1, n, p), 1 - alpha / 2)
    return low, high


def rate(k: int, n: int) -> str:
    """`0.012 (12/1000; 0.006-0.021)`: the rate, the counts and its exact 95% interval."""
    if n == 0:
        return "-"
    lo, hi = clopper_pearson(k, n)
    return f"{k / n:.3f} ({k}/{n}; {lo:.3f}-{hi:.3f})"


def recall_at_fpr(pos: Sequence[float], neg: Sequence[float], fpr: float
                  ) -> tuple[float, float]:
    """(recall, threshold): the threshold fires (score > threshold) on at most `fpr` of
    the negatives."""
    neg_sorted = np.sort(np.asarray(neg))[::-1]
    allowed = int(np.floor(fpr * len(neg_sorted)))
    thr = float(neg_sorted[allowed]) if allowed < len(neg_sorted) else -np.inf
    return float(np.mean(np.asarray(pos) > thr)), thr

"""Train the override detector on generated and hand-written texts, by their spans.

From benchmarks/: `python -m guard_model.train_mil [--out PATH] [--final]`.

The scanner scores a text by its best span (a sentence or line, or two adjacent ones:
override_model.py), so that is what this trainer fits: multiple-instance logistic
regression over the same hashed character n-grams. A text is a bag of spans; an attack
needs one span that fires, so each epoch its best-scoring span is the positive example;
a benign text must have none, so every one of its spans is a negative. A text of one
span (every generated segment) is an ordinary example, as in train.py.

Data: the generated segments of generate.py (with grammar_more.py), the hand-written
texts of written/ (10% of them, stratified by file, held back and reported), and the
corpus's dev split for negatives. The choice of settings and the bias use only the
development data of devdata.py (sets 1-6 and the dev split); `--final` scores the sets
written after the model (paraphrase set 7), once.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from guard_corpus import load_corpus

from guard_model.devdata import (
    DEV_FPR,
    Labelled,
    dev_sets,
    flat,
    recall_at_fpr,
    rules,
    shipped_logit,
    view,
)
from guard_model.generate import dataset
from guard_model.written import Written, load_written
from tracerl.guard import override_model
from tracerl.guard.jailbreak import CLASSIFIER_MIN_P
from tracerl.guard.override_model import (
    BITS,
    MIN_SEGMENT,
    ORDERS,
    OverrideModel,
    all_buckets,
    codes_of,
    segments,
    spans,
)


@dataclass(frozen=True)
class Bags:
    """Every span of every text as one sparse row of hashed n-gram ids."""

    ids: np.ndarray
    rows: np.ndarray
    """The span row of each id."""
    norms: np.ndarray
    """1/sqrt(#grams) per span row."""
    group: np.ndarray
    """The text of each span row (non-decreasing)."""


def bags(texts: list[str]) -> Bags:
    """The spans the scanner would score, per text (the whole text if it is too short)."""
    ids, rows, norms, group = [], [], [], []
    r = 0
    for g, text in enumerate(texts):
        codes = codes_of(view(text))
        n = len(codes)
        buckets = all_buckets(codes)
        if n < MIN_SEGMENT:
            ss, se = np.array([0]), np.array([n])
        else:
            ss, se = spans(*segments(codes), n)
        for s, e in zip(ss.tolist(), se.tolist(), strict=True):
            grams = np.concatenate([b[s:max(s, e - k + 1)] for k, b in zip(ORDERS, buckets,
                                                                          strict=True)])
            ids.append(grams)
            rows.append(np.full(len(grams), r))
            norms.append(1.0 / np.sqrt(max(len(grams), 1)))
            group.append(g)
            r += 1
    return Bags(np.concatenate(ids), np.concatenate(rows), np.array(norms), np.array(group))


def fit_mil(b: Bags, y: np.ndarray, weight: np.ndarray, epochs: int, l2: float,
            lr: float = 0.05, fixed_bias: float | None = None) -> tuple[np.ndarray, float]:
    """Full-batch Adam on the weighted mean logistic loss plus l2 * |w|^2: the best span
    of each attack is its positive row, every span of a benign text a negative row.
    With `fixed_bias` the bias is not learned: a span of n-grams the data never showed
    then scores that low, so an attack must be recognised by what it holds, not by the
    absence of benign n-grams (with a learned bias, junk such as "qwxz jjkk vvbn" and
    short commands scored near the threshold)."""
    dim = len(ORDERS) << BITS
    w, bias = np.zeros(dim), (0.0 if fixed_bias is None else fixed_bias)
    m, v, mb, vb = np.zeros(dim), np.zeros(dim), 0.0, 0.0
    n_rows = len(b.norms)
    y_row = y[b.group]
    pos_weight = (y == 0).sum() / max((y == 1).sum(), 1)
    w_text = np.where(y == 1, pos_weight, 1.0) * weight
    w_text /= w_text.mean()
    pos_rows = y_row == 1
    for t in range(1, epochs + 1):
        z = np.bincount(b.rows, weights=w[b.ids], minlength=n_rows) * b.norms + bias
        # the best row of each attack: the first row of its group by falling z
        order = np.lexsort((-z, b.group))
        best = np.zeros(n_rows, dtype=bool)
        best[order[np.r_[True, b.group[order][1:] != b.group[order][:-1]]]] = True
        active = ~pos_rows | best
        p = 1.0 / (1.0 + np.exp(-z))
        g_row = np.where(active, (p - y_row) * w_text[b.group], 0.0) / len(y)
        gw = np.bincount(b.ids, weights=(g_row * b.norms)[b.rows], minlength=dim) + 2 * l2 * w
        gb = g_row.sum()
        m = 0.9 * m + 0.1 * gw
        v = 0.999 * v + 0.001 * gw * gw
        mb, vb = 0.9 * mb + 0.1 * gb, 0.999 * vb + 0.001 * gb * gb
        step = lr * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        w -= step * m / (np.sqrt(v) + 1e-8)
        if fixed_bias is None:
            bias -= step * mb / (np.sqrt(vb) + 1e-8)
    return w, bias


def hold_back(items: list[Written], seed: int) -> tuple[list[Written], list[Written]]:
    """(train, held back): 10% of each file, chosen by a seeded shuffle."""
    rng = random.Random(seed)
    train, held = [], []
    for source in sorted({i.source for i in items}):
        mine = [i for i in items if i.source == source]
        rng.shuffle(mine)
        k = len(mine) // 10
        held += mine[:k]
        train += mine[k:]
    return train, held


def logit_of(model: OverrideModel):
    def logit(text: str) -> float:
        p = min(max(model.best(view(text))[0], 1e-12), 1 - 1e-12)
        return float(np.log(p / (1 - p)))
    return logit


def calibrated(model: OverrideModel, dev: Labelled) -> OverrideModel:
    """The bias moved so that the scanner's threshold (CLASSIFIER_MIN_P) fires on at most
    DEV_FPR of the development negatives."""
    _, thr = recall_at_fpr(logit_of(model), dev)
    target = float(np.log(CLASSIFIER_MIN_P / (1 - CLASSIFIER_MIN_P)))
    return OverrideModel(model.weights, model.bias - thr - 1e-6 + target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--l2", type=float, default=1e-6)
    parser.add_argument("--written-weight", type=float, default=10.0,
                        help="weight of a hand-written text against a generated segment")
    parser.add_argument("--generated", type=float, default=1.0,
                        help="fraction of generate.py's segments to use (0: none)")
    parser.add_argument("--fixed-bias", type=float, default=-4.0,
                        help="hold the bias at this logit while fitting (see fit_mil); "
                             "'nan' learns it")
    parser.add_argument("--all-written", action="store_true",
                        help="train on every written text (no 10%% held back)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the calibrated weights here (the shipped file is "
                             "src/tracerl/guard/override_model.npz)")
    args = parser.parse_args()
    written = load_written()
    train_w, held_w = (written, []) if args.all_written else hold_back(written, args.seed)
    texts = [i.text for i in train_w]
    labels = [float(i.attack) for i in train_w]
    weights = [args.written_weight] * len(train_w)
    if args.generated > 0:
        corpus = [i.text for i in load_corpus("dev")
                  if not (i.positive and i.category == "jailbreak")]
        g_texts, g_labels = dataset(args.seed, corpus=corpus, more=True)
        keep = int(len(g_texts) * args.generated)
        texts += g_texts[:keep]
        labels += [float(x) for x in g_labels[:keep]]
        weights += [1.0] * keep
    t0 = time.perf_counter()
    b = bags(texts)
    print(f"{len(texts)} texts ({len(train_w)} written, {int(sum(labels))} attacks), "
          f"{len(b.norms)} spans, features in {time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    w, bias = fit_mil(b, np.array(labels), np.array(weights), args.epochs, args.l2,
                      fixed_bias=None if np.isnan(args.fixed_bias) else args.fixed_bias)
    print(f"fitted in {time.perf_counter() - t0:.0f} s")
    model = OverrideModel(w.astype(np.float16).astype(np.float64), bias)
    dev = dev_sets(later=True)
    model = calibrated(model, flat(dev))
    z_min = float(np.log(CLASSIFIER_MIN_P / (1 - CLASSIFIER_MIN_P)))
    logit = logit_of(model)
    print("\n| data | shipped detector alone: recall at 2% FPR | new detector alone | "
          "rules + new detector: recall | FPR |")
    print("|---|---:|---:|---:|---:|")
    report = dict(dev)
    if held_w:
        report["written, held back"] = [(i.text, i.attack) for i in held_w]
    for name, items in report.items():
        r0, _ = recall_at_fpr(shipped_logit, items, DEV_FPR)
        r, _ = recall_at_fpr(logit, items, DEV_FPR)
        fired = [(rules(t) or logit(t) >= z_min, y) for t, y in items]
        pos = [f for f, y in fired if y]
        neg = [f for f, y in fired if not y]
        print(f"| {name} | {r0:.3f} | {r:.3f} | {np.mean(pos):.3f} ({sum(pos)}/{len(pos)}) | "
              f"{np.mean(neg):.3f} ({sum(neg)}/{len(neg)}) |")
    r0, _ = recall_at_fpr(shipped_logit, flat(dev), DEV_FPR)
    r, _ = recall_at_fpr(logit, flat(dev), DEV_FPR)
    print(f"| all development data | {r0:.3f} | {r:.3f} | | |")
    if args.out:
        override_model.save(model, args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

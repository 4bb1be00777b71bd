"""Train the override detector and write src/tracerl/guard/override_model.npz.

From benchmarks/: `python -m guard_model.train [--seed 15] [--epochs 300]`. Logistic
regression over the hashed n-grams of override_model.py (the same featurisation the
scanner uses, so there is one definition), fitted with full-batch Adam and L2 on the
segments of generate.py; 10% of them are held back and reported. The dev split of
benchmarks/guard_corpus feeds negatives; its held-out split is never read here. The
bias is then set so that the detector fires on at most `--max-fpr` of the held-back
negatives, and the weights are saved as float16 (about a second of numpy on 2 cores).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from guard_corpus import load_corpus
from guard_corpus.paraphrase_sets import SETS, SETS_2

from guard_model.devdata import DEV_FPR, view
from guard_model.generate import dataset
from guard_model.train_mil import Bags, fit_mil, logit_of
from tracerl.guard import override_model
from tracerl.guard.jailbreak import CLASSIFIER_MIN_P
from tracerl.guard.override_model import ORDERS, OverrideModel, codes_of, gram_buckets


def features(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bucket ids, row of each id, 1/sqrt(#grams) per row): each text is one segment."""
    ids, rows, norms = [], [], np.zeros(len(texts))
    for r, text in enumerate(texts):
        codes = codes_of(view(text))
        grams = np.concatenate([gram_buckets(codes, n) for n in ORDERS])
        ids.append(grams)
        rows.append(np.full(len(grams), r))
        norms[r] = 1.0 / np.sqrt(max(len(grams), 1))
    return np.concatenate(ids), np.concatenate(rows), norms


def fit(ids: np.ndarray, rows: np.ndarray, norms: np.ndarray, y: np.ndarray, epochs: int,
        l2: float, lr: float = 0.05) -> tuple[np.ndarray, float]:
    """Full-batch Adam on the mean logistic loss plus l2 * |w|^2, each text one example:
    train_mil.fit_mil with one span per text (its best span is that span)."""
    bags = Bags(ids, rows, norms, np.arange(len(y)))
    return fit_mil(bags, y, np.ones(len(y)), epochs, l2, lr)


def calibrate(model: OverrideModel) -> OverrideModel:
    """Shift the bias so that the scanner's threshold (CLASSIFIER_MIN_P) sits at the
    lowest logit where the detector fires on at most DEV_FPR of the development
    negatives: paraphrase sets 1 and 2 (scored once each, development data since) and
    the dev split's hard negatives. Never reads the held-out split or later sets."""
    items = [x for s in (SETS, SETS_2) for v in s.values() for x in v]
    logit = logit_of(model)
    neg = [logit(t) for t, y in items if not y]
    neg += [logit(i.text) for i in load_corpus("dev") if not i.positive]
    pos = [logit(t) for t, y in items if y]
    allowed = int(DEV_FPR * len(neg))
    cut = sorted(neg, reverse=True)[allowed] + 0.05  # fires above the (allowed+1)-th worst
    rec = float(np.mean(np.array(pos) > cut))
    print(f"calibrated on {len(pos)} positives / {len(neg)} negatives (dev): threshold logit "
          f"{cut:.2f}, dev recall {rec:.3f}, dev FPR <= {allowed / len(neg):.3f}")
    target = float(np.log(CLASSIFIER_MIN_P / (1 - CLASSIFIER_MIN_P)))
    return OverrideModel(model.weights, model.bias - cut + target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--l2", type=float, default=1e-6)
    parser.add_argument("--max-fpr", type=float, default=0.002)
    parser.add_argument("--more", action="store_true",
                        help="add grammar_more.py's segments (the experiment 'linear + "
                             "grammar_more' of docs/benchmarks.md; not the shipped weights)")
    parser.add_argument("--quoted-attacks", action="store_true",
                        help="with --more, also quoted-attack negatives (the cascade's gate, "
                             "guard_model/reader_stage1.npz)")
    parser.add_argument("--out", type=Path, default=override_model.WEIGHTS_PATH,
                        help="where to write the weights (default: the shipped file)")
    parser.add_argument("--calibrate-only", action="store_true",
                        help="only re-calibrate the bias of the shipped model on dev data")
    args = parser.parse_args()
    if args.calibrate_only:
        override_model.save(calibrate(override_model.load()))
        print("wrote src/tracerl/guard/override_model.npz")
        return
    corpus = [i.text for i in load_corpus("dev") if not (i.positive and i.category == "jailbreak")]
    texts, labels = dataset(args.seed, corpus=corpus, more=args.more,
                            quoted_attacks=args.quoted_attacks)
    y = np.array(labels, dtype=float)
    cut = len(texts) * 9 // 10
    t0 = time.perf_counter()
    ids, rows, norms = features(texts[:cut])
    w, b = fit(ids, rows, norms, y[:cut], args.epochs, args.l2)
    print(f"trained on {cut} segments ({int(y[:cut].sum())} positive) in "
          f"{time.perf_counter() - t0:.1f} s")
    model = OverrideModel(w.astype(np.float16).astype(np.float64), b)
    held = [model.best(view(t))[0] for t in texts[cut:]]
    z_neg = np.sort([np.log(p / (1 - p + 1e-12) + 1e-12) for p, yy in zip(held, y[cut:],
                                                                             strict=True)
                     if yy == 0])
    shift = max(0.0, float(z_neg[int(len(z_neg) * (1 - args.max_fpr))]))
    model = OverrideModel(model.weights, b - shift)
    held = np.array([model.best(view(t))[0] for t in texts[cut:]])
    yh = y[cut:]
    rec = float(((held >= 0.5) & (yh == 1)).sum() / (yh == 1).sum())
    fpr = float(((held >= 0.5) & (yh == 0)).sum() / (yh == 0).sum())
    print(f"held-back generated segments: recall {rec:.3f}, FPR {fpr:.4f} "
          f"(bias shifted by {shift:.2f})")
    override_model.save(calibrate(model), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

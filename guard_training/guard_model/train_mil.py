"""Train the override detector on generated and hand-written texts, by their spans.

From guard_training/: `python -m guard_model.train_mil [--sets] [--real] [--out PATH]`;
the shipped weights: `--sets --real --folds all --epochs 200` (docs/guard.md).

The scanner scores a text by its best span (a sentence or line, or two adjacent ones:
override_model.py), so that is what this trainer fits: multiple-instance logistic
regression over the same hashed character n-grams. A text is a bag of spans; an attack
needs one span that fires, so each epoch its best-scoring span is the positive example;
a benign text must have none, so every one of its spans is a negative. A text of one
span (every generated segment) is an ordinary example, as in train.py.

Data: the generated segments of generate.py (with grammar_more.py), the hand-written
texts of written/ (10% of them, stratified by file, held back and reported, unless
`--all-written`), and the corpus's dev split for negatives. Without `--sets`, the
paraphrase sets already scored (devdata.dev_sets) are development data only: the bias
is calibrated on them. With `--sets` (the shipped weights) they are training data too,
with the training sets written the same way (devdata.training_sets): each set is by
another writer, and hard twins by other hands are what moved the ranking most
(docs/benchmarks.md). The bias is then calibrated on held-out sets: the model is fitted
once per group of SET_GROUPS with that group left out, each group is scored by the fit
that did not see it, and the threshold is the one at which the rules and the detector
together (as scan() decides) fire on HELD_OUT_FPR of those held-out negatives. The set
written after the model is scored once, by final.py.

With `--real` (issue 31) the training fifths of guard_training/real join the data (real
text as negatives, public attacks as positives), the model is fitted once, and both
thresholds are placed on the held-out fifth of the real sources trained on
(`calibrate_real`): documents at REAL_FPR, user prompts at PROMPT_FPR. `--folds a` (or
b, or all) trains on the training fifths of those held-out sources too (real.FOLDS) and
calibrates on their held-out fifths with the rest: the cross-fits that
benchmarks/guard.py `--cross` scores on the fold they did not see.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from guard_corpus import load_corpus
from real import BY_NAME, fold_names, fold_sources, load_all

from guard_model.devdata import (
    DEV_FPR,
    Labelled,
    dev_sets,
    flat,
    recall_at_fpr,
    rules,
    shipped_logit,
    training_sets,
    view,
    with_rules,
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
    return shifted(model, thr)


def shifted(model: OverrideModel, threshold: float) -> OverrideModel:
    """The bias moved so that a logit of `threshold` lands just under CLASSIFIER_MIN_P."""
    target = float(np.log(CLASSIFIER_MIN_P / (1 - CLASSIFIER_MIN_P)))
    return OverrideModel(model.weights, model.bias - threshold - 1e-6 + target)


@dataclass(frozen=True)
class Training:
    """What one fit sees: the span bags, and each text's label and weight."""

    bags: Bags
    labels: np.ndarray
    weights: np.ndarray
    epochs: int
    l2: float
    fixed_bias: float | None


_FORKED: Training | None = None
"""The training data, set before the held-out fits are forked (read, not pickled)."""


def fit_model(t: Training, weights: np.ndarray | None = None) -> OverrideModel:
    """The model fitted on `t` (with `weights` instead of t.weights if given), its weights
    rounded to the float16 they ship as."""
    w, bias = fit_mil(t.bags, t.labels, t.weights if weights is None else weights,
                      t.epochs, t.l2, fixed_bias=t.fixed_bias)
    return OverrideModel(w.astype(np.float16).astype(np.float64), bias)


def _held_out_logits(job: tuple[np.ndarray, list[str]]) -> list[float] | OverrideModel:
    """Logits of `texts` from a model fitted without the texts whose rows are `leave`;
    with no texts, the model fitted on everything."""
    leave, texts = job
    assert _FORKED is not None
    if not texts:
        return fit_model(_FORKED)
    weights = _FORKED.weights.copy()
    weights[leave] = 0.0
    logit = logit_of(fit_model(_FORKED, weights))
    return [logit(x) for x in texts]


HELD_OUT_FPR = 0.015
"""Where `--sets` places the threshold on the held-out groups' negatives (rules + detector,
as scan() decides). Not DEV_FPR: placed at 2% there, it landed at 2.2% and 2.3% on the
next fresh blind sets (eighth and ninth rounds: sets 17-20 and 21-24, each about 780
negatives, binomial spread about +-0.5 points), so a fresh set's FPR exceeds the
held-out one by a few tenths of a point; 1.5% leaves that margin below the 2% target."""

SET_GROUPS = (("sets 1+2", "set 3", "set 4", "set 5", "set 6", "set 7", "set 12"),
              ("set 8", "set 9", "set 13", "set 16"), ("set 10", "set 11", "set 14", "set 15"),
              ("set 17", "set 18", "set 19", "set 20"), ("set 21", "set 22", "set 23", "set 24"))
"""The groups of hand-written sets left out in turn by `--sets`: the scored paraphrase sets
(devdata.dev_sets) and the training sets (devdata.training_sets). Sets 7-14 were each
written by one writer who saw nothing of the project, and so were sets 15-24."""


def held_out_fits(t: Training, groups: list[tuple[np.ndarray, Labelled]],
                  workers: int) -> tuple[OverrideModel, dict[str, float]]:
    """(the model fitted on all of t, held-out logits): each group's texts (rows of t)
    scored by a model fitted without that group; the fits run in `workers` processes."""
    global _FORKED
    _FORKED = t
    jobs = [(rows, [x for x, _ in items]) for rows, items in groups]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers) as pool:
        *scored, model = pool.map(_held_out_logits, [*jobs, (np.arange(0), [])], chunksize=1)
    held = {x: z for (_, texts), logits in zip(jobs, scored, strict=True)
            for x, z in zip(texts, logits, strict=True)}
    return model, held


REAL_FPR = 0.003
"""Where `--real` places the document threshold (the detector's p = CLASSIFIER_MIN_P): rules
and detector together fire on this share of the held-out fifth of the real-text sources
trained on (the held-out sources are never read here). Below the 0.5% target, for the
margin a fresh source needs (the spread between sources is wider than between sets)."""

PROMPT_FPR = 0.01
"""Where `--real` places the user-prompt threshold (`prompt_p`): rules and detector fire on
this share of the same held-out real text. Attacks are far more common in what users
type than in what tools return, so a prompt may be flagged at a weaker score. (Placed at
1.5% of the held-back hand-written hard negatives instead, it landed above the document
threshold: those negatives are written to be hard, not drawn from what users type.)"""


def calibrate_real(model: OverrideModel, real_held: Labelled) -> tuple[OverrideModel, float]:
    """(the model with its bias moved so that CLASSIFIER_MIN_P is the document threshold,
    the user-prompt threshold as a probability of that model)."""
    combined = with_rules(logit_of(model))
    scores = {x: combined(x) for x, _ in real_held}
    _, thr = recall_at_fpr(scores.__getitem__, real_held, REAL_FPR)
    _, thr_prompt = recall_at_fpr(scores.__getitem__, real_held, PROMPT_FPR)
    z = float(np.log(CLASSIFIER_MIN_P / (1 - CLASSIFIER_MIN_P))) + (thr_prompt - thr)
    prompt_p = round(float(1 / (1 + np.exp(-z))), 3)
    for label, t in (("document", thr), ("user-prompt", thr_prompt)):
        pos = [scores[x] > t for x, y in real_held if y]
        neg = [scores[x] > t for x, y in real_held if not y]
        print(f"real text, held-out fifth, {label} threshold: recall {np.mean(pos):.3f} "
              f"({sum(pos)}/{len(pos)}), false alarms {np.mean(neg):.4f} ({sum(neg)}/{len(neg)})")
    print(f"document threshold: logit {thr:.3f} -> p {CLASSIFIER_MIN_P}; user-prompt "
          f"threshold: logit {thr_prompt:.3f} -> p {prompt_p}")
    return shifted(model, thr), prompt_p


def real_held_out(trained: frozenset[str] = frozenset()) -> Labelled:
    """The held-out fifth of the real sources trained on (the held-out sources not in
    `trained` are not read)."""
    return [(i.text, i.attack) for name, items in load_all("heldout", trained).items()
            if not BY_NAME[name].held_out or name in trained for i in items]


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
    parser.add_argument("--sets", action="store_true",
                        help="train on the scored paraphrase sets too, calibrating on "
                             "held-out groups of them (one fit per group, one on all)")
    parser.add_argument("--set-weight", type=float, default=30.0,
                        help="weight of a paraphrase-set text with --sets")
    parser.add_argument("--workers", type=int, default=2,
                        help="processes for the held-out fits of --sets")
    parser.add_argument("--real", action="store_true",
                        help="train on the training split of guard_training/real too (real "
                             "text as negatives, public attacks as positives) and calibrate "
                             "on held-out data instead of the --sets group fits (one fit)")
    parser.add_argument("--folds", nargs="+", default=[], metavar="FOLD",
                        help="with --real: train on the training fifths of these folds of "
                             "held-out sources too (real.FOLDS: a, b, or all)")
    parser.add_argument("--real-weight", type=float, default=3.0,
                        help="weight of a real text (negative) with --real")
    parser.add_argument("--real-attack-weight", type=float, default=10.0,
                        help="weight of a public attack with --real")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the calibrated weights here (the shipped file is "
                             "src/tracerl/guard/override_model.npz)")
    parser.add_argument("--calibrate-only", type=Path, default=None, metavar="WEIGHTS",
                        help="only redo --real's calibration of a weights file (written "
                             "to --out)")
    args = parser.parse_args()
    if args.folds and not (args.real or args.calibrate_only):
        parser.error("--folds needs --real")
    folds = fold_names(args.folds)
    trained = fold_sources(folds)
    if args.calibrate_only:
        model, prompt_p = calibrate_real(override_model.load(args.calibrate_only),
                                         real_held_out(trained))
        override_model.save(model, args.out or args.calibrate_only, prompt_p,
                            folds=folds)
        return
    written = load_written()
    train_w, held_w = (written, []) if args.all_written else hold_back(written, args.seed)
    texts = [i.text for i in train_w]
    labels = [float(i.attack) for i in train_w]
    weights = [args.written_weight] * len(train_w)
    dev = dev_sets(later=True)
    groups: list[tuple[np.ndarray, Labelled]] = []
    labelled = {**dev, **training_sets()}
    real_held: Labelled = []
    if args.real:
        for items in load_all("train", trained).values():
            texts += [i.text for i in items]
            labels += [float(i.attack) for i in items]
            weights += [args.real_attack_weight if i.attack else args.real_weight
                        for i in items]
        real_held = real_held_out(trained)
    for names in SET_GROUPS if args.sets else ():
        items = [x for name in names for x in labelled[name]]
        groups.append((np.arange(len(texts), len(texts) + len(items)), items))
        texts += [x for x, _ in items]
        labels += [float(y) for _, y in items]
        weights += [args.set_weight] * len(items)
    if args.generated > 0:
        corpus = [i.text for i in load_corpus("dev")
                  if not (i.positive and i.category == "jailbreak")]
        g_texts, g_labels = dataset(args.seed, corpus=corpus, more=True)
        keep = int(len(g_texts) * args.generated)
        texts += g_texts[:keep]
        labels += [float(x) for x in g_labels[:keep]]
        weights += [1.0] * keep
    t0 = time.perf_counter()
    data = Training(bags(texts), np.array(labels), np.array(weights), args.epochs, args.l2,
                    None if np.isnan(args.fixed_bias) else args.fixed_bias)
    print(f"{len(texts)} texts ({len(train_w)} written, {int(sum(labels))} attacks), "
          f"{len(data.bags.norms)} spans, features in {time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    if args.real:
        model, prompt_p = calibrate_real(fit_model(data), real_held)
        dev = {"dev split": dev["dev split"]}
    elif groups:
        full, held = held_out_fits(data, groups, args.workers)
        items = [x for _, group in groups for x in group]
        combined = with_rules(held.__getitem__)
        score = {x: combined(x) for x, _ in items}.__getitem__  # the rules run once a text
        _, thr = recall_at_fpr(score, items, HELD_OUT_FPR)
        model = shifted(full, thr)
        print(f"threshold {thr:.3f} (rules + detector fire on {HELD_OUT_FPR:.1%} of the "
              "held-out groups' negatives)")
        print("\n| held-out group (scored by the fit without it) | recall at 2% FPR | "
              "4% | 6% | recall at the threshold | FPR at the threshold |")
        print("|---|---:|---:|---:|---:|---:|")
        for names, (_, items) in zip(SET_GROUPS, groups, strict=True):
            at = [recall_at_fpr(score, items, f)[0] for f in (0.02, 0.04, 0.06)]
            fired = [(score(x) > thr, y) for x, y in items]
            print(f"| {' + '.join(names)} | {at[0]:.3f} | {at[1]:.3f} | {at[2]:.3f} | "
                  f"{np.mean([f for f, y in fired if y]):.3f} | "
                  f"{np.mean([f for f, y in fired if not y]):.3f} |")
        dev = {"dev split": dev["dev split"]}
    else:
        model = calibrated(fit_model(data), flat(dev))
    print(f"fitted in {time.perf_counter() - t0:.0f} s")
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
        fired = [(rules(x) or logit(x) >= z_min, y) for x, y in items]
        pos = [f for f, y in fired if y]
        neg = [f for f, y in fired if not y]
        print(f"| {name} | {r0:.3f} | {r:.3f} | {np.mean(pos):.3f} ({sum(pos)}/{len(pos)}) | "
              f"{np.mean(neg):.3f} ({sum(neg)}/{len(neg)}) |")
    if args.out:
        override_model.save(model, args.out, prompt_p if args.real else CLASSIFIER_MIN_P,
                            folds=folds)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""Experiment of issue 15 (not shipped): a cascade whose stage 2 is a small
convolutional reader of the spans the shipped linear detector flags.

The linear model of tracerl/guard/override_model.py sums character n-gram weights, so
it cannot tell "the agent is authorised to ..." under a fake header from the same header
over benign text except by the words it has seen. This reader sees order: hashed
character 1-4-gram embeddings, four dilated convolutions (receptive field about 60
characters: an addressee and the order after it), max- and mean-pooling, one logistic
output; trained in torch (train_reader.py), inference here in numpy. In the cascade,
stage 1 scores every span and only spans above a low gate (stored in reader.npz) are
read, at most MAX_CANDIDATES windows of at most WINDOW characters each, so the cost is
linear in the text plus a constant per flagged span.

Result (docs/benchmarks.md, "Guard, cascade"): on the development data the reader is
worse than stage 1 alone at every mix of the two, and on the hand-written sets too, so
the scanner keeps stage 1. `python -m guard_model.reader` (from benchmarks/) prints the
cascade's figures next to stage 1's.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tracerl.guard import override_model
from tracerl.guard.override_model import codes_of, hashed_grams, segments

WEIGHTS_PATH = Path(__file__).with_name("reader.npz")
STAGE1_PATH = Path(__file__).with_name("reader_stage1.npz")
"""The linear model the reader's gate was set on: the first retrain with grammar_more.py
(its quoted-attack negatives included), not the shipped weights."""
LINEAR_MORE_PATH = Path(__file__).with_name("linear_more.npz")
"""The linear model retrained with grammar_more.py without quoted attacks (a candidate
for shipping that the development data did not favour)."""
ORDERS = (1, 2, 3, 4)
BITS = 15
"""log2 of the shared embedding table's rows (all orders hash into one table)."""
KERNEL = 5
DILATIONS = (1, 2, 4, 8)
WINDOW = 320
"""Most characters stage 2 reads per candidate: the span, widened to its neighbours."""
CONTEXT = 64
"""Characters of context taken on each side of a candidate span."""
MAX_CANDIDATES = 4
"""Spans read per text at most (the highest stage-1 logits above the gate)."""


def reader_ids(codes: np.ndarray) -> np.ndarray:
    """(len(codes), len(ORDERS)) embedding rows: the n-grams starting at each character
    (the text is padded with NULs, so every position has every order)."""
    padded = np.concatenate((codes, np.zeros(ORDERS[-1] - 1, dtype=np.uint32)))
    grams = hashed_grams(padded, ORDERS, BITS, shared=True)
    return np.stack([g[: len(codes)] for g in grams], axis=1)


@dataclass(frozen=True)
class Reader:
    """Weights of the convolutional reader (float32 in memory)."""

    embed: np.ndarray
    """(1 << BITS, dim)"""
    convs: tuple[tuple[np.ndarray, np.ndarray], ...]
    """Per layer: (KERNEL * c_in, c_out) weight in tap-major order, (c_out,) bias."""
    out_w: np.ndarray
    """(2 * c_out,): max-pooled then mean-pooled features."""
    out_b: float
    gate: float
    """Stage-1 logit at or above which a span is read."""

    def logit(self, codes: np.ndarray) -> float:
        """Logit that `codes` (one window, lower-case view) holds an override."""
        x = self.embed[reader_ids(codes)].sum(axis=1)  # (L, dim)
        n = len(codes)
        for (w, b), d in zip(self.convs, DILATIONS, strict=True):
            pad = d * (KERNEL // 2)
            xp = np.zeros((n + 2 * pad, x.shape[1]), dtype=np.float32)
            xp[pad : pad + n] = x
            taps = np.concatenate([xp[k * d : k * d + n] for k in range(KERNEL)], axis=1)
            x = np.maximum(taps @ w + b, 0.0)
        pooled = np.concatenate((x.max(axis=0), x.mean(axis=0)))
        return float(pooled @ self.out_w + self.out_b)


def window(n: int, start: int, end: int) -> tuple[int, int]:
    """The span [start, end) of a text of n characters with CONTEXT characters on each
    side, at most WINDOW characters in all (the span itself is kept whole if it fits)."""
    end = min(end, start + WINDOW)
    room = (WINDOW - (end - start)) // 2
    lo = max(0, start - min(CONTEXT, room))
    hi = min(n, end + min(CONTEXT, room))
    return lo, hi


@dataclass(frozen=True)
class Cascade:
    """Stage 1 (override_model) gates, stage 2 (Reader) decides."""

    stage1: override_model.OverrideModel
    reader: Reader

    def best(self, text: str) -> tuple[float, int, int, int]:
        """(probability, start, end, spans read) of the most override-like span of
        `text` (a lower-case view) as stage 2 judges it, among the at most
        MAX_CANDIDATES spans whose stage-1 logit reaches the gate; (0.0, 0, 0, 0) when
        no span does."""
        codes = codes_of(text)
        if len(codes) < override_model.MIN_SEGMENT:
            return 0.0, 0, 0, 0
        starts, ends = segments(codes)
        spans_s, spans_e = override_model.spans(starts, ends, len(codes))
        z = self.stage1.logits(codes, spans_s, spans_e)
        above = np.flatnonzero(z >= self.reader.gate)
        if len(above) == 0:
            return 0.0, 0, 0, 0
        if len(above) > MAX_CANDIDATES:
            above = above[np.argpartition(-z[above], MAX_CANDIDATES - 1)[:MAX_CANDIDATES]]
        best, lo, hi = -np.inf, 0, 0
        for i in above:
            s, e = int(spans_s[i]), int(spans_e[i])
            a, b = window(len(codes), s, e)
            y = self.reader.logit(codes[a:b])
            if y > best:
                best, lo, hi = y, s, e
        return float(1.0 / (1.0 + np.exp(-best))), lo, hi, len(above)


def save(reader: Reader, path: Path = WEIGHTS_PATH) -> None:
    """Write the weights as float16 with the settings they were trained under."""
    arrays = {f"conv{i}_w": w.astype(np.float16) for i, (w, _) in enumerate(reader.convs)}
    arrays.update({f"conv{i}_b": b.astype(np.float32) for i, (_, b) in enumerate(reader.convs)})
    np.savez_compressed(
        path, embed=reader.embed.astype(np.float16), out_w=reader.out_w.astype(np.float32),
        out_b=np.float32(reader.out_b), gate=np.float32(reader.gate), bits=np.int32(BITS),
        orders=np.array(ORDERS, dtype=np.int32), kernel=np.int32(KERNEL),
        dilations=np.array(DILATIONS, dtype=np.int32), **arrays)


def _check(path: Path, reader: Reader) -> None:
    """Refuse a file whose shapes do not chain or whose values are not finite."""
    dim = reader.embed.shape[1]
    for i, (w, b) in enumerate(reader.convs):
        if w.shape != (KERNEL * dim, b.shape[0]):
            raise ValueError(f"{path}: conv{i} weight {w.shape} does not take {dim} channels")
        dim = b.shape[0]
    if reader.out_w.shape != (2 * dim,):
        raise ValueError(f"{path}: output weight {reader.out_w.shape}, expected ({2 * dim},)")
    arrays = (reader.embed, reader.out_w, *(a for wb in reader.convs for a in wb))
    if not all(np.isfinite(a).all() for a in arrays) or not np.isfinite(
            [reader.out_b, reader.gate]).all():
        raise ValueError(f"{path}: weights are not all finite")


@functools.lru_cache(maxsize=1)
def load(path: Path = WEIGHTS_PATH) -> Reader:
    """The shipped reader (loaded once). A file made with other hashing or layer
    settings, or whose shapes or values are broken, is refused with the reason."""
    with np.load(path) as f:
        got = (int(f["bits"]), tuple(int(x) for x in f["orders"]), int(f["kernel"]),
               tuple(int(x) for x in f["dilations"]))
        want = (BITS, ORDERS, KERNEL, DILATIONS)
        if got != want:
            raise ValueError(f"{path}: trained with (bits, orders, kernel, dilations)={got}; "
                             f"this code reads {want}")
        convs = tuple((f[f"conv{i}_w"].astype(np.float32), f[f"conv{i}_b"].astype(np.float32))
                      for i in range(len(DILATIONS)))
        reader = Reader(f["embed"].astype(np.float32), convs, f["out_w"].astype(np.float32),
                        float(f["out_b"]), float(f["gate"]))
    _check(path, reader)
    return reader


@functools.lru_cache(maxsize=1)
def cascade() -> Cascade:
    """The experimental cascade: the linear weights it was trained behind gate, the
    reader decides."""
    return Cascade(override_model.load.__wrapped__(STAGE1_PATH), load())


def main() -> None:
    """The shipped linear detector, the two retrained linear models and the cascade,
    each with the rules, on the development data, the corpus's held-out split and
    paraphrase sets 3, 4 and 5."""
    from guard_corpus import load_corpus
    from guard_corpus.paraphrase_set3 import SETS_3
    from guard_corpus.paraphrase_set4 import SETS_4
    from guard_corpus.paraphrase_set5 import SETS_5
    from guard_corpus.paraphrase_sets import SETS, SETS_2
    from guard_corpus.score import print_recall_table

    from tracerl.guard import scan
    from tracerl.guard.findings import lower_same_length
    from tracerl.guard.jailbreak import CLASSIFIER_MIN_P
    from tracerl.guard.normalize import canonical

    casc = cascade()

    def rules(text: str) -> bool:
        return any(f.scanner == "jailbreak" and f.score >= 0.5 and f.detail != "override detector"
                   for f in scan(text, ["jailbreak"]))

    def view(text: str) -> str:
        return canonical(text, lower_same_length(text)).text

    shipped = override_model.load()
    more = override_model.load.__wrapped__(LINEAR_MORE_PATH)
    detectors = {
        "linear, shipped": lambda t: rules(t) or shipped.best(view(t))[0] >= CLASSIFIER_MIN_P,
        "linear + grammar_more": lambda t: rules(t) or more.best(view(t))[0] >= CLASSIFIER_MIN_P,
        "cascade's stage 1 alone":
            lambda t: rules(t) or casc.stage1.best(view(t))[0] >= CLASSIFIER_MIN_P,
        "cascade": lambda t: rules(t) or casc.best(view(t))[0] >= CLASSIFIER_MIN_P,
    }
    dev, held = load_corpus("dev"), load_corpus("heldout")

    def split(items: list) -> list[tuple[str, bool]]:
        return [(i.text, True) for i in items if i.positive and i.category == "jailbreak"] + [
            (i.text, False) for i in items if not i.positive]

    sets = {"sets 1+2 (dev)": [x for s in (SETS, SETS_2) for v in s.values() for x in v],
            "dev split": split(dev), "held-out split": split(held),
            "set 3": [x for v in SETS_3.values() for x in v],
            "set 4": [x for v in SETS_4.values() for x in v],
            "set 5": [x for v in SETS_5.values() for x in v]}
    print_recall_table(sets, detectors)


if __name__ == "__main__":
    main()

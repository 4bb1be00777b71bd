"""Stage 2 of the override detector: a small convolutional reader of flagged spans.

The linear model of override_model.py sums character n-gram weights, so it cannot tell
"the agent is authorised to ..." under a fake header from the same header over benign
text, nor "forget the umbrella" said to a person from "forget your rules" said to a
model, except by the words it has seen. This model reads order: hashed character 1-4-gram
embeddings, four dilated convolutions (receptive field about 60 characters: an
addressee and the order that follows it), max- and mean-pooling, one logistic output.
It is trained in torch (benchmarks/guard_model/train_reader.py) on the generator's data
and shipped as numpy arrays (override_reader.npz, float16, about 2 MB); inference here
is numpy only.

It runs in a cascade (`Cascade`): stage 1 scores every segment of the text in a few
numpy passes and only the spans above its low gate (stored in this file, calibrated for
recall) are read by stage 2, at most MAX_CANDIDATES of them, each in a window of at
most WINDOW characters. Cost is therefore linear in the text (stage 1) plus a constant
per flagged span; most benign text flags nothing and pays only stage 1.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tracerl.guard import override_model
from tracerl.guard.override_model import codes_of, hashed_grams, segments

WEIGHTS_PATH = Path(__file__).with_name("override_reader.npz")
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
    """The shipped cascade: override_model's weights gate, this file's reader decides."""
    return Cascade(override_model.load(), load())

"""A small learned detector of instruction overrides, direct and indirect, in any language.

Keyword rules (jailbreak.py) catch "ignore all previous instructions" and its obfuscated
forms, but not its paraphrases: "the rules you were given earlier are void", a header
that pretends to open a new system prompt, "Hinweis an den KI-Assistenten: ...", a web
page that tells the agent reading it to mail the user's files somewhere. This module
scores text with a linear model over hashed character n-grams, trained here on
generated data (guard_training/guard_model: the generator, the trainer and its report), and
shipped as a small weights file (override_model.npz, float16).

Why this shape:
- Character 3-5-grams see sub-word pieces, so inflections, compounds, typos and other
  languages share features with what training saw; hashing needs no vocabulary file.
- A text is scored by segments (sentences and lines, long ones cut at 256 characters)
  and by pairs of adjacent segments, so one injected sentence inside a long benign page
  is not diluted by the page, and a header and its payload are read together.
- A segment's logit is `sum(w[grams]) / sqrt(#grams) + b`, exactly what the trainer
  fits on single segments: a prefix sum per n-gram order gives every segment's sum at
  once, so the whole scan is a few numpy passes over the text (about 0.1 ms for 2 KB).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

WEIGHTS_PATH = Path(__file__).with_name("override_model.npz")
DOCUMENT_P = 0.5
"""The detector's probability at which a document or tool output is flagged: the trainer
moves the bias so that rules and detector together fire here on 0.3% of held-out real
text (guard_training/guard_model/train_mil.py, `--real`)."""
ORDERS = (3, 4, 5)
BITS = 18
"""log2 of the hashed feature space per n-gram order."""
MAX_SEGMENT = 256
MIN_SEGMENT = 12
"""Shorter single segments are scored only together with a neighbour."""
_BOUNDARY = np.array([ord(c) for c in "\n.!?;:。！？；：|"], dtype=np.uint32)
_IS_BOUNDARY = np.zeros(0x10000, dtype=bool)
_IS_BOUNDARY[_BOUNDARY] = True
_MUL = np.uint32(0x9E3779B1)
_STEP = np.uint32(0x01000193)
_PAD = np.zeros(max(ORDERS) - 1, dtype=np.uint32)
_ROWS = np.arange(len(ORDERS))[:, None]


def gram_buckets(codes: np.ndarray, n: int) -> np.ndarray:
    """Hashed bucket of each character n-gram of `codes` (uint32 code points), by start."""
    return all_buckets(codes)[ORDERS.index(n)]


def all_buckets(codes: np.ndarray) -> list[np.ndarray]:
    """`gram_buckets` for every order in ORDERS (each order in its own 1 << BITS rows)."""
    return hashed_grams(codes, ORDERS, BITS)


def hashed_grams(codes: np.ndarray, orders: tuple[int, ...], bits: int,
                 shared: bool = False) -> list[np.ndarray]:
    """Hashed bucket of each character n-gram of `codes`, by start, for each n in
    `orders` (ascending), sharing one rolling hash (`rolling_hashes`). Each order gets
    its own 1 << bits rows unless `shared`, when all orders hash into one table."""
    out: list[np.ndarray] = []
    for k, h in rolling_hashes(codes, orders):
        offset = 0 if shared else orders.index(k) << bits
        out.append(bucket_of(h, k, bits).astype(np.int64) + offset)
    return out


def rolling_hashes(codes: np.ndarray, orders: tuple[int, ...]) -> Iterator[tuple[int, np.ndarray]]:
    """(n, h) for each n in `orders` (ascending): h[i] is the unfinished hash of the
    n-gram at i, hash(n-1-gram at i) * STEP ^ codes[i + n - 1]. Each h is a new array
    that later steps do not change, except for n = 1, where it is `codes` itself."""
    h = codes
    for k in range(1, orders[-1] + 1):
        if len(codes) < k:
            h = codes[:0]
        elif k > 1:
            h = h[: len(codes) - k + 1] * _STEP
            h ^= codes[k - 1 :]
        if k in orders:
            yield k, h


def bucket_of(h: np.ndarray, n: int, bits: int) -> np.ndarray:
    """The bucket in [0, 1 << bits) of each unfinished n-gram hash (a new uint32 array)."""
    f = h ^ np.uint32(n * 0x2545F491)
    f *= _MUL
    f >>= np.uint32(32 - bits)
    return f


def codes_of(text: str) -> np.ndarray:
    """The text's code points, whitespace runs kept as they are (the view is lower-case);
    a lone surrogate (json.loads makes them from "\\ud800") is kept as its code point."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def segments(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) of sentences and lines, long ones cut every MAX_SEGMENT characters."""
    n = len(codes)
    # Array methods rather than np.* functions here: numpy's Python wrappers cost about a
    # microsecond a call, a tenth of this function (issue 15, latency).
    cuts = _IS_BOUNDARY.take(codes, mode="clip").nonzero()[0]  # clip: U+FFFF, no cut
    cuts += 1
    # "Header:\n\norder" is one thought: a cut right after another one is dropped, so
    # punctuation runs and blank lines do not leave segments of one character.
    if len(cuts) > 1:
        keep = np.empty(len(cuts), dtype=bool)
        keep[0] = True
        np.greater(cuts[1:] - cuts[:-1], 3, out=keep[1:])
        cuts = cuts[keep]
    bounds = np.concatenate(([0], cuts, np.arange(MAX_SEGMENT, n, MAX_SEGMENT), [n]))
    bounds.sort()
    starts, ends = bounds[:-1], bounds[1:]
    keep = ends > starts  # also drops the empty spans of duplicate bounds
    return starts[keep], ends[keep]


def spans(starts: np.ndarray, ends: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The spans a text of n characters is scored by: its segments of MIN_SEGMENT
    characters or more and every pair of adjacent segments (the whole text if none)."""
    single = (ends - starts) >= MIN_SEGMENT
    spans_s = np.concatenate((starts[single], starts[:-1]))
    spans_e = np.concatenate((ends[single], ends[1:]))
    if len(spans_s) == 0:
        return np.array([0]), np.array([n])
    return spans_s, spans_e


@dataclass(frozen=True)
class OverrideModel:
    """Weights of the linear model; `scores` gives the best segment (pair) of a text."""

    weights: np.ndarray
    """float64 (sums of gathered weights need no conversion), len(ORDERS) << BITS."""
    bias: float
    prompt_p: float = DOCUMENT_P
    """The probability at which a user prompt is flagged (calibrated by the trainer; at
    most DOCUMENT_P: attacks are far more common in prompts than in documents)."""
    span_trim: np.ndarray = field(default_factory=lambda: np.array(ORDERS)[:, None] - 1)
    """n - 1 per order, (len(ORDERS), 1): an n-gram must end inside its span."""

    def logits(self, codes: np.ndarray, starts: np.ndarray,
               ends: np.ndarray) -> np.ndarray:
        """Logit of each span [starts[i], ends[i]) of `codes`."""
        # One prefix sum of gathered weights per order, every span's sum per order at
        # once: (len(ORDERS), len(starts)) index arrays. The text is padded so that every
        # order has n grams (the last n - 1 run into the padding and are never summed:
        # an n-gram must end inside its span), which keeps the orders in one matrix.
        # The sums are exact, so their order does not matter: float16 weights are
        # multiples of 2**-24, and float64 holds such sums exactly below 2**29 (the
        # shipped weights are at most 4.3 in size: 2**29 is 10**8 grams away).
        n = len(codes)
        padded = np.concatenate((codes, _PAD))
        gathered = np.empty((len(ORDERS), n), dtype=self.weights.dtype)
        by_order = self.weights.reshape(len(ORDERS), -1)
        for row, (k, h) in enumerate(rolling_hashes(padded, ORDERS)):
            # mode="clip" (no index is out of range): with "raise", take buffers `out`
            by_order[row].take(bucket_of(h[:n], k, BITS), out=gathered[row], mode="clip")
        prefix = np.zeros((len(ORDERS), n + 1))
        gathered.cumsum(axis=1, dtype=np.float64, out=prefix[:, 1:])
        # An order's grams of a span start in [start, last), last = end - (order - 1) at
        # most, so the grams that run into the padding are never summed; a span too short
        # for the order has last == start and sums to 0. No index needs clipping.
        last = np.maximum(ends - self.span_trim, starts)  # (O, S)
        total = (prefix[_ROWS, last] - prefix[_ROWS, starts]).sum(axis=0)
        count = (last - starts).sum(axis=0)
        return total / np.sqrt(np.maximum(count, 1.0)) + self.bias

    def best(self, text: str) -> tuple[float, int, int]:
        """(probability, start, end) of the most override-like segment or pair of
        adjacent segments of `text`; (0.0, 0, 0) for text too short to judge."""
        codes = codes_of(text)
        if len(codes) < MIN_SEGMENT:
            return 0.0, 0, 0
        starts, ends = segments(codes)
        spans_s, spans_e = spans(starts, ends, len(codes))
        z = self.logits(codes, spans_s, spans_e)
        i = int(z.argmax())
        return float(1.0 / (1.0 + np.exp(-z[i]))), int(spans_s[i]), int(spans_e[i])


def save(model: OverrideModel, path: Path = WEIGHTS_PATH, prompt_p: float | None = None,
         folds: tuple[str, ...] = ()) -> None:
    """Write the weights as float16 (the file ships in the package). `folds`: the folds of
    held-out sources the fit trained on too (guard_training/real.FOLDS), which benchmarks
    must then not count as unseen (`trained_folds`)."""
    np.savez_compressed(path, weights=model.weights.astype(np.float16),
                        bias=np.float32(model.bias), bits=np.int32(BITS),
                        orders=np.array(ORDERS, dtype=np.int32),
                        prompt_p=np.float32(model.prompt_p if prompt_p is None else prompt_p),
                        folds=np.array(folds, dtype=np.str_))


def trained_folds(path: Path | str | None = None) -> tuple[str, ...]:
    """The folds of held-out sources the weights in `path` (default: in use) trained on;
    () for a file written before folds existed."""
    with np.load(Path(path) if path is not None else _active) as f:
        return tuple(str(x) for x in f["folds"]) if "folds" in f.files else ()


_active: Path = WEIGHTS_PATH


def use(path: Path | str | None) -> None:
    """Make `path` the weights file the scanners read in this process (a detector retrained
    with guard_training/, compared against the shipped one); None: the shipped file. The
    Guard's user-prompt threshold (config.PROMPT_MIN_SCORE) stays the shipped one."""
    global _active
    chosen = Path(path) if path is not None else WEIGHTS_PATH
    _read(chosen)  # a missing or incompatible file fails here, not in the next scan
    _active = chosen


def in_use() -> Path:
    """The weights file the scanners read (`use()`)."""
    return _active


def load(path: Path | str | None = None) -> OverrideModel:
    """The model in `path`, by default the one in use (the shipped file unless `use()`
    named another); each file is read once."""
    return _read(Path(path) if path is not None else _active)


@functools.lru_cache(maxsize=4)
def _read(path: Path) -> OverrideModel:
    """A file made with other hashing settings is refused with the settings named, since
    its weights would be read at wrong places."""
    with np.load(path) as f:
        bits, orders = int(f["bits"]), tuple(int(x) for x in f["orders"])
        if (bits, orders) != (BITS, ORDERS):
            raise ValueError(f"{path}: trained with bits={bits}, orders={orders}; this code "
                             f"hashes with bits={BITS}, orders={ORDERS}")
        # stored as float32: rounded back to the value the trainer wrote
        prompt_p = round(float(f["prompt_p"]), 6) if "prompt_p" in f.files else DOCUMENT_P
        return OverrideModel(f["weights"].astype(np.float64), float(f["bias"]), prompt_p)

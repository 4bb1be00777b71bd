"""Similarity to a reference: ROUGE-1/2 (ROUGE-L, BLEU and edit distance live in
overlap.py), chrF, set precision / recall / F1 over list answers, and graded numeric
closeness.

Missing or empty references are Unjudged (overlap with nothing is undefined); an empty
answer overlaps nothing and scores 0.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from tracerl.evals.fault import malformed_reference
from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult
from tracerl.evals.metrics.overlap import (
    clipped_overlap,
    matched_ngrams,
    ngrams,
    reference_matches,
    reference_tokens,
    references,
    tokens,
)
from tracerl.evals.metrics.structured import NoJson, answer_json_or_none, output_json
from tracerl.evals.metrics.text import gold_number, last_number, normalise

SetScore = Literal["f1", "precision", "recall"]
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d{1,3}[.)])\s+")
_SPLIT = re.compile(r"[\n;,]")


def rouge_n(candidate: list[str] | Counter[tuple[str, ...]], reference: list[str],
            n: int, overlap: int | None = None) -> float:
    """ROUGE-N F1 (Lin, 2004): clipped n-gram overlap over candidate and reference counts.
    `candidate` is its tokens or, already counted, its n-grams; `overlap` the clipped
    overlap when already counted (`reference_matches`)."""
    if isinstance(candidate, Counter):
        overlap = clipped_overlap(candidate, ngrams(reference, n))
        n_cand = sum(candidate.values())
    else:
        if overlap is None:
            refs = [ngrams(reference, k) for k in range(1, n + 1)]
            overlap = matched_ngrams(candidate, refs)[-1]
        n_cand = max(len(candidate) - n + 1, 0)
    if overlap == 0:
        return 0.0
    p, r = overlap / n_cand, overlap / (len(reference) - n + 1)
    return 2 * p * r / (p + r)


@dataclass(frozen=True)
class RougeN:
    """ROUGE-N F1 against the reference field, best over several references.
    The name follows n ("rouge_1", "rouge_2") unless given.

    >>> from tracerl.evals.items import item_from_text
    >>> RougeN(1)(item_from_text("the cat sat", answer="the cat sat down")).score
    0.8571428571428571
    """

    n: int = 1
    reference_key: str = "answer"
    name: str = ""

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"RougeN.n must be >= 1, got {self.n}")
        if not self.name:
            object.__setattr__(self, "name", f"rouge_{self.n}")

    def __call__(self, item: EvalItem) -> MetricResult:
        cand = item.derived("tokens", tokens)
        matched = reference_matches(item, self.reference_key, self.n)
        return MetricResult(max(rouge_n(cand, r, self.n, m[self.n - 1]) for r, m in zip(
            reference_tokens(item, self.reference_key), matched, strict=True)))


def _char_ngrams(text: str, n: int) -> Counter[str]:
    return Counter([text[i: i + n] for i in range(len(text) - n + 1)])


def order_matches_loop(cand: str, ref: str, orders: int) -> list[int]:
    """Clipped character n-gram matches for n = 1..orders, with Counters."""
    return [sum((_char_ngrams(cand, n) & _char_ngrams(ref, n)).values())
            for n in range(1, orders + 1)]


_ORDER_SHIFT = 58  # n-gram codes carry their order in the bits above this


def order_matches(cand: str, ref: str, orders: int) -> list[int]:
    """The same counts as `order_matches_loop`, vectorised: each n-gram becomes the
    exact integer of its characters (`bits` per character, its order on top): the code
    points themselves when they are narrow enough (ASCII text: 7 bits), else their ranks
    in the two strings' joint alphabet. The candidate's codes are sorted once and each
    distinct reference n-gram's count in them is found by binary search. Falls back to
    the loop when the alphabet is too large for the codes to fit in 64 bits."""
    points = np.frombuffer((cand + ref).encode("utf-32-le"), dtype=np.uint32)
    bits = int(points.max()).bit_length()
    if bits * orders > _ORDER_SHIFT:
        alphabet, dense = np.unique(points, return_inverse=True)
        bits = int(len(alphabet)).bit_length()
        if bits * orders > _ORDER_SHIFT:
            return order_matches_loop(cand, ref, orders)
        x = dense.astype(np.int64) + 1
    else:
        x = points.astype(np.int64)

    split, g = len(cand), x
    in_cand, in_ref = [x[:split] | (1 << _ORDER_SHIFT)], [x[split:] | (1 << _ORDER_SHIFT)]
    for n in range(2, orders + 1):  # n-grams of the joined strings, minus those across it
        g = (g[:-1] << bits) | x[n - 1:]
        tagged = g | (n << _ORDER_SHIFT)
        in_cand.append(tagged[: split - n + 1])
        in_ref.append(tagged[split:])
    cand_codes = np.sort(np.concatenate(in_cand))
    distinct, ref_counts = np.unique(np.concatenate(in_ref), return_counts=True)
    found = (np.searchsorted(cand_codes, distinct, "right")
             - np.searchsorted(cand_codes, distinct, "left"))
    per_order = np.bincount(distinct >> _ORDER_SHIFT, weights=np.minimum(found, ref_counts),
                            minlength=orders + 1)
    return [int(per_order[n]) for n in range(1, orders + 1)]


def chrf(candidate: str, reference: str, max_n: int = 6, beta: float = 2.0) -> float:
    """chrF (Popovic, 2015): character n-gram F-beta, n = 1..max_n, whitespace removed.

    Precision and recall are averaged over the orders first and then combined, recall
    weighted beta times as much, as in the author's chrF++.py; an order that either
    string is too short to have is left out of the averages (so "cat" against "cats"
    is not punished for lacking 4-grams).
    """
    cand = "".join(unicodedata.normalize("NFC", candidate).split())
    ref = "".join(unicodedata.normalize("NFC", reference).split())
    orders = min(max_n, len(cand), len(ref))
    if orders == 0:
        return 0.0
    matches = order_matches(cand, ref, orders)
    p = sum(m / (len(cand) - n) for n, m in enumerate(matches)) / orders
    r = sum(m / (len(ref) - n) for n, m in enumerate(matches)) / orders
    if p + r == 0:
        return 0.0
    return (1 + beta**2) * p * r / (beta**2 * p + r)


@dataclass(frozen=True)
class ChrF:
    """chrF against the reference field (best over several references); robust to
    inflection and word order where word n-grams are not.

    >>> from tracerl.evals.items import item_from_text
    >>> round(ChrF()(item_from_text("cats", answer="cat")).score, 4)
    0.8984
    """

    reference_key: str = "answer"
    max_n: int = 6
    beta: float = 2.0
    name: str = "chrf"

    def __call__(self, item: EvalItem) -> MetricResult:
        out = item.output_text()
        return MetricResult(max(chrf(out, r, self.max_n, self.beta)
                                for r in references(item, self.reference_key)))


def _canonical(x: Any) -> str:
    if isinstance(x, str):
        bullet = _BULLET.match(x)  # anchored at the start: what _BULLET.sub("", x) removes
        return normalise(unicodedata.normalize("NFC", x[bullet.end():] if bullet else x))
    return json.dumps(x, sort_keys=True, ensure_ascii=False)


def list_items(text: str, value: Any = ...) -> list[str]:
    """A list answer's items, in order: a JSON array (anywhere in the text), else the
    lines / comma- or semicolon-separated parts, bullets and numbering removed;
    normalised (casefolded, whitespace collapsed), blanks dropped. `value`: the text's
    JSON when already parsed (None: it holds none)."""
    if value is ...:
        try:
            value = output_json(text)
        except NoJson:
            value = None
    if isinstance(value, list):
        parts = [_canonical(v) for v in value]
    else:
        parts = [_canonical(p) for p in _SPLIT.split(text)]
    return [p for p in parts if p]


def reference_items(item: EvalItem, key: str) -> list[str]:
    ref = item.require(key)
    if isinstance(ref, str):
        parts = list_items(ref)
        if not parts:  # a blank text is a data bug; an expected empty set is written []
            raise malformed_reference(key, "is a text listing no items")
    elif isinstance(ref, (list, tuple)):
        parts = [c for c in (_canonical(v) for v in ref) if c]
    else:
        raise malformed_reference(key, "is not a list (or a text listing items)")
    return parts


def set_scores(output: list[str], gold: list[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of two item sets; duplicates count once on each side."""
    out, ref = set(output), set(gold)
    if not out and not ref:
        return 1.0, 1.0, 1.0
    hit = len(out & ref)
    p = hit / len(out) if out else 0.0
    r = hit / len(ref) if ref else 1.0
    return p, r, (2 * p * r / (p + r) if hit else 0.0)


@dataclass(frozen=True)
class SetF1:
    """Set precision, recall or F1 of a list answer against the reference list (field
    `answer`). Items are compared normalised; a repeated item counts once, so
    ["a", "a"] against ["a", "b"] has recall 0.5, not 1. The name follows `score`.

    >>> from tracerl.evals.items import item_from_text
    >>> SetF1()(item_from_text("- Paris\\n- paris\\n- Rome", answer=["Paris", "Berlin"])).score
    0.5
    """

    score: SetScore = "f1"
    reference_key: str = "answer"
    name: str = ""

    def __post_init__(self) -> None:
        if self.score not in ("f1", "precision", "recall"):
            raise ValueError(f"SetF1.score must be f1, precision or recall, got {self.score!r}")
        if not self.name:
            object.__setattr__(self, "name", f"set_{self.score}")

    def __call__(self, item: EvalItem) -> MetricResult:
        gold = item.memo(f"reference_items:{self.reference_key}",
                         lambda: reference_items(item, self.reference_key))
        out = item.derived("list_items", lambda text: list_items(text, answer_json_or_none(item)))
        p, r, f1 = set_scores(out, gold)
        value = {"precision": p, "recall": r, "f1": f1}[self.score]
        return MetricResult(value, passed=f1 == 1.0,
                            details={"precision": p, "recall": r, "f1": f1})


@dataclass(frozen=True)
class NumericCloseness:
    """Graded closeness of the answer's last number to the reference number:
    1 - |error| / max(rel_tol * |reference|, abs_tol), clipped at 0, so the score
    falls linearly to 0 at `rel_tol` relative error. No number in the answer scores 0.

    >>> from tracerl.evals.items import item_from_text
    >>> NumericCloseness()(item_from_text("about 95 people", answer=100)).score
    0.5
    """

    reference_key: str = "answer"
    rel_tol: float = 0.1
    abs_tol: float = 1e-9
    name: str = "numeric_closeness"

    def __post_init__(self) -> None:
        if self.rel_tol <= 0 or self.abs_tol <= 0:
            raise ValueError("NumericCloseness needs rel_tol > 0 and abs_tol > 0")

    def __call__(self, item: EvalItem) -> MetricResult:
        gold = gold_number(item.require(self.reference_key), self.reference_key)
        got = last_number(item.output_text())
        if got is None:
            return MetricResult(0.0, passed=False, details={"output": None, "reference": gold})
        scale = max(self.rel_tol * abs(gold), self.abs_tol)
        value = max(0.0, 1.0 - abs(got - gold) / scale)
        return MetricResult(value, passed=got == gold, details={"output": got, "reference": gold})

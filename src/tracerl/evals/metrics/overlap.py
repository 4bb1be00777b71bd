"""Reference-overlap metrics: BLEU, ROUGE-L and edit distance, computed locally.

Tokens are lower-cased word characters runs (`\\w+`), so punctuation and case do not
count; edit distance works on characters.

The LCS and the Levenshtein distance run in `rapidfuzz` (compiled, a core dependency)
when it imports; the bit-parallel pure-Python versions here (`lcs_length_py`,
`levenshtein_py`) are the reference the tests hold it to, and the fallback: both give
the same integers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tracerl.evals.fault import malformed_reference
from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult

try:
    from rapidfuzz.distance import LCSseq as _LCSseq
    from rapidfuzz.distance import Levenshtein as _Levenshtein
except ImportError:  # pragma: no cover - a platform without its wheel: the same figures
    _LCSseq = _Levenshtein = None

_WORD = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def ngrams(words: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(zip(*(words[i:] for i in range(n)), strict=False))


def clipped_overlap(a: Counter[tuple[str, ...]], b: Counter[tuple[str, ...]]) -> int:
    """sum over n-grams of min(count in a, count in b), walking the n-grams both have."""
    return sum([min(a[g], b[g]) for g in a.keys() & b.keys()])


def matched_ngrams(candidate: Sequence[str], reference: Sequence[Counter[tuple[str, ...]]]
                   ) -> list[int]:
    """`clipped_overlap(ngrams(candidate, n), reference[n - 1])` for n = 1..len(reference),
    counting only the candidate's n-grams that the reference has: an n-gram can occur in
    the reference only where its first n - 1 words do, so each order looks only at the
    positions where the previous one matched (a long answer against a short reference
    builds a few small tuples instead of every n-gram of every order)."""
    words = tuple(candidate)
    live: Sequence[int] = range(len(words))
    out = []
    for n, ref in enumerate(reference, start=1):
        hits = [i for i in live if words[i: i + n] in ref]
        found = Counter([words[i: i + n] for i in hits])
        out.append(sum([min(c, ref[g]) for g, c in found.items()]))
        live = hits
    return out


def reference_matches(item: EvalItem, key: str, n: int) -> list[list[int]]:
    """Per reference text of field `key`: the answer's clipped n-gram overlap with it
    (`matched_ngrams`) for orders 1..max(n, 4), once per item: BLEU and ROUGE-1/2 share
    it. Unjudged as `references`."""
    orders = max(n, 4)

    def compute() -> list[list[int]]:
        cand = item.derived("tokens", tokens)
        return [matched_ngrams(cand, [ngrams(r, k) for k in range(1, orders + 1)])
                for r in reference_tokens(item, key)]

    return item.memo(f"matched:{key}:{orders}", compute)


def bleu(candidate: Sequence[str], references: Sequence[Sequence[str]], max_n: int = 4,
         smoothing: str = "none", matched: Sequence[int] | None = None) -> float:
    """Sentence BLEU (Papineni et al., 2002): clipped n-gram precisions, geometric mean,
    brevity penalty against the closest reference length.

    smoothing "add1" adds one to numerator and denominator of every n > 1 precision
    (Lin & Och, 2004), so a short sentence missing 4-grams does not score 0.
    `matched`: the clipped overlaps per order when already counted (`matched_ngrams`
    against the references' largest counts).
    """
    if smoothing not in ("none", "add1"):
        raise ValueError(f"bleu smoothing must be 'none' or 'add1', got {smoothing!r}")
    if not candidate or not references:
        return 0.0
    if matched is None:
        best = []  # per order: each n-gram's largest count in any reference
        for n in range(1, max_n + 1):
            counts = ngrams(references[0], n)
            for ref in references[1:]:
                counts = counts | ngrams(ref, n)
            best.append(counts)
        matched = matched_ngrams(candidate, best)
    log_sum = 0.0
    for n, matched_n in enumerate(matched[:max_n], start=1):
        total = max(len(candidate) - n + 1, 0)
        if smoothing == "add1" and n > 1:
            matched_n, total = matched_n + 1, total + 1
        if matched_n == 0 or total == 0:
            return 0.0
        log_sum += math.log(matched_n / total) / max_n
    ref_len = min((abs(len(r) - len(candidate)), len(r)) for r in references)[1]
    bp = 1.0 if len(candidate) > ref_len else math.exp(1 - ref_len / len(candidate))
    return bp * math.exp(log_sum)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists: `lcs_length_py`'s
    value, from rapidfuzz when present. Tokens are given to it as dense integer ids (it
    would otherwise compare multi-character strings by their 64-bit hashes)."""
    if _LCSseq is None:
        return lcs_length_py(a, b)
    ids = {t: i for i, t in enumerate(dict.fromkeys([*a, *b]))}
    return int(_LCSseq.similarity(list(map(ids.__getitem__, a)), list(map(ids.__getitem__, b))))


def lcs_length_py(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence, bit-parallel (Allison & Dix, 1986;
    Hyyro, 2004): bit j of V is 1 while row j of the LCS table has not yet grown, and
    one addition per item of `a` updates all of b's positions at once, so the cost is
    min(len(a), len(b)) big-integer operations instead of len(a) * len(b) cells."""
    if len(a) > len(b):
        a, b = b, a  # iterate over the shorter; the bit vector spans the longer
    m = len(b)
    if not m or not a:
        return 0
    masks: dict[str, int] = {}
    for i, y in enumerate(b):
        masks[y] = masks.get(y, 0) | (1 << i)
    full = (1 << m) - 1
    v = full
    for x in a:
        u = v & masks.get(x, 0)
        v = ((v + u) | (v - u)) & full
    return m - v.bit_count()


def rouge_l(candidate: Sequence[str], reference: Sequence[str], beta: float = 1.0) -> float:
    """ROUGE-L F-measure (Lin, 2004): LCS-based precision and recall, weighted by beta."""
    lcs = lcs_length(candidate, reference)
    if lcs == 0:
        return 0.0
    p, r = lcs / len(candidate), lcs / len(reference)
    return (1 + beta**2) * p * r / (r + beta**2 * p)


def levenshtein(a: str, b: str) -> int:
    """Minimum insertions, deletions and substitutions (of code points) turning a into
    b: `levenshtein_py`'s value, from rapidfuzz when present."""
    if _Levenshtein is None:
        return levenshtein_py(a, b)
    return int(_Levenshtein.distance(a, b))


def levenshtein_py(a: str, b: str) -> int:
    """Minimum insertions, deletions and substitutions turning a into b.

    Bit-parallel (Myers, 1999, "A fast bit-vector algorithm for approximate string
    matching based on dynamic programming", in the global-distance form of Hyyro,
    2001): the vertical and horizontal +1/-1 deltas of one DP column are bit vectors
    over the longer string (Python integers have any width), one column per character
    of the shorter one. A common prefix and suffix cost nothing and are cut first.
    Complement is XOR with the mask, and the vectors are never masked: every operation
    (and, or, xor, +, <<) carries information only upwards, so the garbage that
    collects above bit m never reaches the bits read.
    """
    if a == b:
        return 0
    start, stop = 0, min(len(a), len(b))
    while start < stop and a[start] == b[start]:
        start += 1
    end = 0
    while end < stop - start and a[-1 - end] == b[-1 - end]:
        end += 1
    a, b = a[start: len(a) - end], b[start: len(b) - end]
    if len(a) > len(b):
        a, b = b, a
    m = len(b)
    if not a:
        return m
    peq: dict[str, int] = {}
    for i, c in enumerate(b):
        peq[c] = peq.get(c, 0) | (1 << i)
    mask, last = (1 << m) - 1, 1 << (m - 1)
    pv, mv, dist = mask, 0, m
    get = peq.get
    for c in a:
        eq = get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (mask ^ (xh | pv))
        mh = pv & xh
        if ph & last:
            dist += 1
        elif mh & last:
            dist -= 1
        ph = (ph << 1) | 1  # row 0 grows by one per column: global distance
        pv = (mh << 1) | (mask ^ (xv | ph))
        mv = ph & xv
    return dist


def reference_tokens(item: EvalItem, key: str) -> list[list[str]]:
    """`tokens` of each reference text of field `key`, once per item (BLEU and the
    ROUGEs share them); Unjudged as `references`."""
    return item.memo(f"ref_tokens:{key}", lambda: [tokens(r) for r in references(item, key)])


def references(item: EvalItem, key: str) -> list[str]:
    """The reference text(s) of field `key`; none, or only blank ones, is Unjudged (an
    overlap with nothing is undefined, not 0)."""
    ref = item.require(key)
    refs = [str(r) for r in ref if r is not None] if isinstance(ref, (list, tuple)) \
        else [str(ref)]
    refs = [r for r in refs if r.strip()]
    if not refs:
        raise malformed_reference(key, "holds no non-empty reference text")
    return refs


@dataclass(frozen=True)
class Bleu:
    """Sentence BLEU against the reference field (a string or a list of them).

    >>> from tracerl.evals.items import item_from_text
    >>> Bleu()(item_from_text("the cat sat on the mat", answer="the cat sat on the mat"))
    1.0
    """

    reference_key: str = "answer"
    max_n: int = 4
    smoothing: str = "add1"
    name: str = "bleu"

    def __call__(self, item: EvalItem) -> float:
        refs = reference_tokens(item, self.reference_key)
        matched = (reference_matches(item, self.reference_key, self.max_n)[0]
                   if len(refs) == 1 else None)  # several: clipped by their union
        return bleu(item.derived("tokens", tokens), refs, self.max_n, self.smoothing, matched)


@dataclass(frozen=True)
class RougeL:
    """ROUGE-L F against the reference field (best over several references).

    >>> from tracerl.evals.items import item_from_text
    >>> RougeL()(item_from_text("the cat sat", answer="the cat sat down"))
    0.8571428571428571
    """

    reference_key: str = "answer"
    beta: float = 1.0
    name: str = "rouge_l"

    def __call__(self, item: EvalItem) -> float:
        cand = item.derived("tokens", tokens)
        return max(rouge_l(cand, r, self.beta)
                   for r in reference_tokens(item, self.reference_key))


@dataclass(frozen=True)
class EditDistance:
    """Character edit similarity: 1 - levenshtein / longer length (1.0 = identical);
    the raw distance is in details.

    >>> from tracerl.evals.items import item_from_text
    >>> EditDistance()(item_from_text("kitten", answer="sitting")).details["distance"]
    3
    """

    reference_key: str = "answer"
    name: str = "edit_similarity"

    def __call__(self, item: EvalItem) -> MetricResult:
        out, ref = item.output_text(), references(item, self.reference_key)[0]
        dist = levenshtein(out, ref)
        longest = max(len(out), len(ref))
        return MetricResult(1.0 - dist / longest if longest else 1.0,
                            passed=dist == 0, details={"distance": dist})

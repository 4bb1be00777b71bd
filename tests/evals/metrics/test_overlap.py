"""BLEU, ROUGE-L and edit distance against hand-computed values.

candidate "the cat sat on the mat", reference "the cat is on the mat":
  unigram precision 5/6 (the x2, cat, on, mat), bigram 3/5 (the cat, on the, the mat),
  trigram 1/4 (on the mat), 4-gram 0/3; equal lengths so the brevity penalty is 1.
  BLEU-2 = sqrt(5/6 * 3/5) = sqrt(1/2); BLEU-4 = 0 unsmoothed;
  add-one for n > 1: (5/6 * 4/6 * 2/5 * 1/4) ** (1/4) = (1/18) ** (1/4).
  LCS = "the cat on the mat" (5): ROUGE-L P = R = F = 5/6.
"""

from __future__ import annotations

import math

import pytest

from tracerl.evals.metrics import Bleu, EditDistance, RougeL, bleu, levenshtein, rouge_l
from tracerl.evals.metrics.overlap import tokens

CAND, REF = tokens("The cat sat on the mat."), tokens("the cat is on the mat")


def test_bleu_2_by_hand():
    assert bleu(CAND, [REF], max_n=2) == pytest.approx(math.sqrt(0.5))


def test_bleu_4_unsmoothed_is_zero_without_4gram_matches():
    assert bleu(CAND, [REF], max_n=4) == 0.0


def test_bleu_4_add_one_smoothing_by_hand():
    assert bleu(CAND, [REF], max_n=4, smoothing="add1") == pytest.approx((1 / 18) ** 0.25)


def test_bleu_brevity_penalty_by_hand():
    # "the cat" vs "the cat sat": unigram 2/2, bigram 1/1; BP = exp(1 - 3/2).
    assert bleu(["the", "cat"], [["the", "cat", "sat"]], max_n=2) == pytest.approx(
        math.exp(-0.5))


def test_bleu_uses_closest_reference_length():
    refs = [["the", "cat", "sat", "down", "here"], ["the", "cat"]]
    assert bleu(["the", "cat"], refs, max_n=2) == pytest.approx(1.0)


def test_rouge_l_by_hand():
    assert rouge_l(CAND, REF) == pytest.approx(5 / 6)
    # P = 2/2, R = 2/3 -> F1 = 2 * 1 * (2/3) / (5/3) = 0.8
    assert rouge_l(["the", "cat"], ["the", "cat", "sat"]) == pytest.approx(0.8)


def test_levenshtein_by_hand():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3


def test_metric_classes_read_the_reference_field(item):
    it = item("The cat sat on the mat.", answer="the cat is on the mat")
    assert RougeL()(it) == pytest.approx(5 / 6)
    assert Bleu(max_n=2, smoothing="none")(it) == pytest.approx(math.sqrt(0.5))


def test_edit_similarity_by_hand(item):
    result = EditDistance()(item("kitten", answer="sitting"))
    assert (result.score, result.details["distance"]) == (pytest.approx(1 - 3 / 7), 3)


def test_rouge_l_takes_best_reference(item):
    assert RougeL()(item("a b", answer=["x y", "a b"])) == 1.0


def _levenshtein_loop(a: str, b: str) -> int:
    """The textbook dynamic programme, as the reference for the bit-parallel one."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        cur = [i]
        for j, y in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def _lcs_loop(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@pytest.mark.parametrize("compiled", [True, False], ids=["rapidfuzz", "pure_python"])
def test_distances_equal_the_dynamic_programme(compiled):
    """levenshtein / lcs_length (rapidfuzz) and their pure-Python bit-parallel versions
    give the textbook programme's integers on random unicode (emoji, combining accents,
    CJK, NUL, lone surrogates), shared prefixes and suffixes, long strings."""
    import random

    from tracerl.evals.metrics import overlap

    lev = overlap.levenshtein if compiled else overlap.levenshtein_py
    lcs = overlap.lcs_length if compiled else overlap.lcs_length_py
    if compiled:
        assert overlap._Levenshtein is not None, "rapidfuzz is a core dependency"
    rng = random.Random(0)
    for _ in range(200):
        a = "".join(rng.choice("abcé ") for _ in range(rng.randint(0, 70)))
        b = "".join(rng.choice("abcé ") for _ in range(rng.randint(0, 70)))
        assert lev(a, b) == _levenshtein_loop(a, b), (a, b)
        assert lcs(a.split(), b.split()) == _lcs_loop(a.split(), b.split()), (a, b)
    alphabet = "ab🎉e\u0301東\x00\ud800𝔘 "
    for _ in range(25):  # shared prefixes and suffixes (cut before the bit vectors), long
        # strings (vectors of several machine words), emoji and combining accents
        core = lambda n: "".join(rng.choice(alphabet) for _ in range(n))  # noqa: E731
        fix, tail = core(rng.randint(0, 30)), core(rng.randint(0, 30))
        a, b = fix + core(rng.randint(0, 150)) + tail, fix + core(rng.randint(0, 150)) + tail
        assert lev(a, b) == _levenshtein_loop(a, b) == lev(b, a), (a, b)
        wa, wb = a.split(), b.split()  # multi-character tokens, including ones of one char
        assert lcs(wa, wb) == _lcs_loop(wa, wb) == lcs(wb, wa), (wa, wb)
    assert lev("", "") == 0 and lev("abc", "abc") == 0
    assert lev("aXa", "aa") == 1 and lev("abab", "ab") == 2
    assert lcs([], ["a"]) == 0 and lcs(["ab", "a"], ["a", "ab"]) == 1


def test_clipped_overlap_equals_the_counter_intersection():
    import random
    from collections import Counter

    from tracerl.evals.metrics.overlap import clipped_overlap, ngrams

    rng = random.Random(0)
    for _ in range(300):
        a = [rng.choice("ab東é") for _ in range(rng.randint(0, 12))]
        b = [rng.choice("ab東é") for _ in range(rng.randint(0, 12))]
        for n in (1, 2, 3):
            ga, gb = ngrams(a, n), ngrams(b, n)
            assert clipped_overlap(ga, gb) == sum((ga & gb).values()) == sum(
                (Counter(ga) & Counter(gb)).values())


def test_matched_ngrams_equals_the_clipped_overlap_of_all_ngrams():
    """The chained count (only where the previous order matched) against every n-gram
    counted: repeated words, periodic n-grams, unicode, either side empty or longer."""
    import random

    from tracerl.evals.metrics.overlap import clipped_overlap, matched_ngrams, ngrams

    rng = random.Random(1)
    for _ in range(400):
        a = [rng.choice(["a", "b", "東", "é", "ab"]) for _ in range(rng.randint(0, 40))]
        b = [rng.choice(["a", "b", "東", "é", "ab"]) for _ in range(rng.randint(0, 12))]
        refs = [ngrams(b, n) for n in range(1, 6)]
        assert matched_ngrams(a, refs) == [clipped_overlap(ngrams(a, n), refs[n - 1])
                                           for n in range(1, 6)], (a, b)

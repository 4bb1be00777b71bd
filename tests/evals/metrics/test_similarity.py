"""ROUGE-N, chrF, set P/R/F1 and numeric closeness: hand-computed values, duplicates,
unicode, empty answers, and unjudged references."""

from __future__ import annotations

import pytest

from tracerl.evals.metric import score
from tracerl.evals.metrics import ChrF, NumericCloseness, RougeN, SetF1
from tracerl.evals.metrics.similarity import chrf, list_items, rouge_n, set_scores


def test_rouge_1_and_2_hand_computed():
    cand, ref = "the cat sat on the mat".split(), "the cat lay on the mat".split()
    # unigrams: overlap the, cat, on, the, mat = 5 of 6 each side
    assert rouge_n(cand, ref, 1) == pytest.approx(5 / 6)
    # bigrams: the-cat, on-the, the-mat = 3 of 5 each side
    assert rouge_n(cand, ref, 2) == pytest.approx(3 / 5)


def test_rouge_clips_repeated_words():
    # a naive overlap counts each "the" of the candidate: 4 of 4
    assert rouge_n(["the"] * 4, ["the", "cat"], 1) == pytest.approx(2 * 0.25 * 0.5 / 0.75)


def test_rouge_metric_best_of_references_and_empty_answer(item):
    it = item("paris is the capital", answer=["berlin", "the capital is paris"])
    assert RougeN(1)(it).score == 1.0 and RougeN(2).name == "rouge_2"
    assert RougeN(1)(item("", answer="paris")).score == 0.0


def test_empty_reference_is_unjudged_not_zero(item):
    for ref in ("", "   ", [], [None, ""]):
        result = score(RougeN(1), item("paris", answer=ref))
        assert result.score is None and "no non-empty reference" in result.details["unjudged"]


def test_chrf_hand_computed():
    # "ab" vs "abc": n=1 p 2/2 r 2/3; n=2 p 1/1 r 1/2; n>=3: "ab" too short, left out.
    # P = 1, R = (2/3 + 1/2) / 2 = 7/12; F2 = 5PR / (4P + R)
    r = 7 / 12
    assert chrf("ab", "abc") == pytest.approx(5 * r / (4 + r))
    assert chrf("a b", "ab") == 1.0  # whitespace is not part of chrF
    assert chrf("", "abc") == 0.0 and chrf("xyz", "abc") == 0.0


def test_chrf_unicode_normal_forms_are_equal(item):
    assert ChrF()(item("cafe\u0301", answer="café")).score == 1.0


def test_list_items_parse_json_bullets_and_separators():
    assert list_items('["A", " b ", 3]') == ["a", "b", "3"]
    assert list_items("- Paris\n* Rome\n3. Oslo") == ["paris", "rome", "oslo"]
    assert list_items("Paris, Rome; Oslo") == ["paris", "rome", "oslo"]
    assert list_items("") == []


def test_set_scores_count_duplicates_once():
    # a naive "each output item in the reference" gives precision 1 and recall 2/2
    assert set_scores(["a", "a"], ["a", "b"]) == (1.0, 0.5, pytest.approx(2 / 3))
    assert set_scores([], []) == (1.0, 1.0, 1.0)
    assert set_scores(["a"], []) == (0.0, 1.0, 0.0)


def test_set_f1_metric(item):
    it = item('["Paris", "Rome", "Madrid"]', answer=["paris", "oslo"])
    assert SetF1("precision")(it).score == pytest.approx(1 / 3)
    assert SetF1("recall")(it).score == 0.5
    assert SetF1()(it).score == pytest.approx(0.4)
    assert SetF1()(item("", answer=["a"])).score == 0.0
    assert score(SetF1(), item("a", answer=7)).score is None


def test_set_f1_reference_as_text(item):
    assert SetF1()(item("rome, paris", answer="Paris\nRome")).passed


@pytest.mark.parametrize(("answer", "gold", "expected"), [
    ("95", 100, 0.5),            # 5 off, 10% of 100 is the zero point
    ("it is 100.0", "100", 1.0),
    ("80", 100, 0.0),            # beyond 10%: clipped at 0
    ("\u22125", -5, 1.0),        # a Unicode minus sign is a minus
    ("1,050", 1000, 0.5),
    ("no number", 3, 0.0),       # the policy gave no number: wrong, not unjudged
    ("", 3, 0.0),
])
def test_numeric_closeness_hand_computed(item, answer, gold, expected):
    assert NumericCloseness()(item(answer, answer=gold)).score == pytest.approx(expected)


def test_numeric_closeness_bad_reference_is_unjudged(item):
    for gold in ("n/a", True, "inf"):
        assert score(NumericCloseness(), item("3", answer=gold)).score is None


def test_vectorised_chrf_counts_equal_the_counter_loop():
    import random

    from tracerl.evals.metrics.similarity import order_matches, order_matches_loop

    rng = random.Random(0)
    # ASCII (code points as codes), Latin-1 (9 bits: ranks for 6 orders), CJK and emoji
    # (ranks), a NUL character, and one-character strings
    for alphabet in ("ab", "abc.,\x00", "abcé東京 ", "aé\u00ff", "x🎉\u0301"):
        for _ in range(150):
            a = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
            b = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
            for orders in {1, min(6, len(a), len(b))}:
                assert order_matches(a, b, orders) == order_matches_loop(a, b, orders), (a, b)
    wide = "".join(chr(0x4E00 + i) for i in range(3000))  # too many characters for 64 bits
    assert order_matches(wide, wide[::2], 6) == order_matches_loop(wide, wide[::2], 6)


def test_bullet_strip_equals_the_regex_substitution():
    import random

    from tracerl.evals.metrics.similarity import _BULLET, _canonical
    from tracerl.evals.metrics.text import normalise

    rng = random.Random(0)
    for _ in range(3000):
        x = "".join(rng.choice(" \t\n-*\u20221234.)aé") for _ in range(rng.randint(0, 12)))
        assert _canonical(x) == normalise(_BULLET.sub("", x)), repr(x)

"""String checks: hand-computed scores, and the cases a naive implementation gets wrong
(substrings inside words, unicode forms, empty answers, Unicode line breaks)."""

from __future__ import annotations

import pytest

from tracerl.evals.metric import score
from tracerl.evals.metrics import (
    ContainsAll,
    ContainsAny,
    ContainsEmail,
    ContainsNone,
    ContainsUrl,
    EndsWith,
    LengthBounds,
    OneLine,
    StartsWith,
)


def test_contains_all_partial_credit(item):
    result = ContainsAll(("alpha", "beta", "gamma", "delta"))(item("alpha and gamma"))
    assert result.score == 0.5 and not result.passed
    assert result.details["missing"] == ["beta", "delta"]


def test_phrases_match_whole_words_not_substrings(item):
    assert ContainsAll(("cat",))(item("concatenate")).score == 0.0
    assert ContainsAll(("cat",), whole_words=False)(item("concatenate")).score == 1.0
    assert ContainsAll(("C++",))(item("I write C++ daily")).score == 1.0


def test_unicode_forms_and_casefolding_match(item):
    decomposed = "Cafe\u0301 in der STRASSE"
    assert ContainsAll(("café", "straße"))(item(decomposed)).score == 1.0
    assert ContainsAll(("café",), case_sensitive=True)(item(decomposed)).score == 0.0


def test_repeated_required_phrase_counts_once(item):
    assert ContainsAll(("a", "a", "b"))(item("a")).score == 0.5


def test_contains_any_and_none(item):
    assert ContainsAny(("yes", "sure"))(item("No.")).score == 0.0
    assert ContainsAny(("yes", "sure"))(item("Sure!")).score == 1.0
    result = ContainsNone(("sorry", "as an ai", "cannot"))(item("Sorry, I cannot."))
    assert result.score == pytest.approx(1 / 3) and result.details["found"] == ["sorry", "cannot"]


def test_empty_answer_contains_nothing(item):
    assert ContainsAll(("x",))(item("")).score == 0.0
    assert ContainsAny(("x",))(item("")).score == 0.0
    assert ContainsNone(("x",))(item("")).score == 1.0


def test_phrases_from_the_reference_and_bad_reference_is_unjudged(item):
    assert ContainsAll()(item("red and blue", required_phrases=["red", "green"])).score == 0.5
    for bad in ([], [""], 3, {"a": 1}):
        result = score(ContainsAll(), item("red", required_phrases=bad))
        assert result.score is None and "required_phrases" in result.details["unjudged"]
    assert score(ContainsNone(), item("x")).details["unjudged"] == \
        "no reference field 'forbidden_phrases'"


def test_phrase_options_are_checked():
    with pytest.raises(ValueError, match="tuple of non-empty strings"):
        ContainsAll("abc")  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "unit", "expected"), [
    ("abcdef", "chars", 1.0),            # 6 within [2, 8]
    ("a", "chars", 0.5),                 # 1 < 2: 1/2
    ("abcdefghijklmnop", "chars", 0.5),  # 16 > 8: 8/16
    ("", "chars", 0.0),
    ("one two  three\nfour", "words", 1.0),
    ("e\u0301" * 4, "chars", 1.0),       # 4 NFC characters, not 8 code points
])
def test_length_bounds_hand_computed(item, text, unit, expected):
    assert LengthBounds(2, 8, unit=unit)(item(text)).score == expected


def test_length_in_tokens_reads_the_sampled_ids_or_is_unjudged(item, make_trajectory):
    from tracerl.evals.items import EvalItem, item_from_text

    assert LengthBounds(max_len=2, unit="tokens")(EvalItem("x", make_trajectory(("a", [])))
                                                   ).score == pytest.approx(2 / 3)
    result = LengthBounds(max_len=2, unit="tokens")(item_from_text("a"))
    assert result.score is None and "no token ids" in result.details["unjudged"]


def test_length_options_are_checked():
    with pytest.raises(ValueError, match="min_len, max_len or both"):
        LengthBounds()
    with pytest.raises(ValueError, match="min_len <= max_len"):
        LengthBounds(5, 2)


@pytest.mark.parametrize(("text", "ok"), [
    ("42", True), ("42\n", True), ("", False), ("   ", False), ("a\nb", False),
    ("a\r\nb", False), ("a\u2028b", False), ("a\x85b", False),
])
def test_one_line(item, text, ok):
    assert OneLine()(item(text)).passed is ok


def test_starts_and_ends_with(item):
    assert StartsWith("Answer:")(item("\n answer: 4")).passed
    assert not StartsWith("Answer:", case_sensitive=True)(item("answer: 4")).passed
    assert EndsWith(".")(item("Done.  ")).passed
    assert not EndsWith(".")(item("")).passed
    assert StartsWith()(item("Dear Ann", prefix="dear")).passed
    assert score(EndsWith(), item("x", suffix="")).score is None


def test_email_presence_absence_and_whole(item):
    assert ContainsEmail()(item("mail ann.lee+x@mail.example.co.uk please")).passed
    assert not ContainsEmail()(item("user at example dot com")).passed
    assert not ContainsEmail()(item("@handle and a@b")).passed
    assert ContainsEmail(present=False)(item("nothing here")).passed
    assert ContainsEmail(whole=True)(item(" zoë@exämple.de ")).passed
    assert not ContainsEmail(whole=True)(item("write to a@b.io")).passed


def test_url_presence_strips_sentence_punctuation(item):
    result = ContainsUrl()(item("See https://docs.python.org/3/library/re.html."))
    assert result.passed and result.details["count"] == 1
    assert not ContainsUrl()(item("see docs.python.org")).passed
    assert ContainsUrl(present=False)(item("no links")).passed
    assert ContainsUrl(whole=True)(item("http://localhost:8000/a?b=1")).passed


def test_presence_shortcut_equals_the_regex_on_random_text(item):
    """Without '@' (e-mail) or '://' (URL) the metrics skip the regex: same results."""
    import random

    from tracerl.evals.metrics.strings import _EMAIL, _URL

    rng = random.Random(0)
    parts = ["a", "é", ".", "@", ":", "/", "//", "x.org", " ", "\n", "HTTPS", "ftp", "-", "_"]
    for _ in range(400):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 14)))
        it = item(text)
        for cls, rx in ((ContainsEmail, _EMAIL), (ContainsUrl, _URL)):
            s = text.strip()
            assert cls()(it).score == float(bool(rx.findall(s))), text
            assert cls(present=False)(it).score == float(not rx.findall(s)), text
            assert cls(whole=True)(it).score == float(rx.fullmatch(s) is not None), text

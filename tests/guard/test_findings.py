import dataclasses
import random
import re

import pytest

from tracerl.guard import Finding
from tracerl.guard.findings import (
    Pattern,
    compile_fast,
    dedupe,
    lower_same_length,
    max_widths,
    non_ascii,
    pattern,
    shannon_entropy,
    trigger_index,
)
from tracerl.guard.normalize import canonical, leet


def test_lower_keeps_length_for_dotted_capital_i():
    assert len(lower_same_length("İstanbul")) == len("İstanbul")


def test_dedupe_drops_a_weaker_finding_inside_a_stronger_one():
    outer, inner = Finding("s", "a", 0, 10, 0.9), Finding("s", "b", 2, 5, 0.5)
    assert dedupe([inner, outer]) == [outer]


def test_dedupe_keeps_findings_of_other_scanners():
    a, b = Finding("s", "a", 0, 10, 0.9), Finding("t", "b", 2, 5, 0.5)
    assert len(dedupe([a, b])) == 2


def test_entropy_of_random_token_exceeds_that_of_a_word():
    assert shannon_entropy("Zx81kQ02LmT7sPv9") > 3.5 > shannon_entropy("aaaabbbb")


def test_leading_word_boundary_moves_out_of_a_simple_regex():
    regex, word_start = compile_fast(r"\bmkfs")
    assert (regex.pattern, word_start) == ("mkfs", True)


def test_leading_word_boundary_stays_with_top_level_alternation():
    regex, word_start = compile_fast(r"\bunion|'x")
    assert (regex.pattern, word_start) == (r"\bunion|'x", False)


def test_canonical_view_maps_offsets_over_removed_characters():
    text = "ab\u200bcd"
    view = canonical(text, text.lower())
    assert view.text == "abcd" and view.span(2, 4) == (3, 5)


def test_canonical_folds_cyrillic_lookalikes():
    text = "\u0456gn\u043er\u0435"
    assert canonical(text, text.lower()).text == "ignore"


def test_leet_view_is_none_without_leet_characters():
    assert leet(canonical("plain", "plain")) is None


def test_lower_same_length_is_right_for_equal_texts_that_are_distinct_objects():
    a = "".join(["Hello ", "WORLD"])
    b = "".join(["HELLO ", "world"])
    assert lower_same_length(a) == "hello world"
    assert lower_same_length(a) is lower_same_length(a)  # the second call is a lookup
    assert lower_same_length(b) == "hello world"
    # Turkish capital I with a dot lowers to a plain i (str.lower gives two characters),
    # and the rest of the text is lowered as usual, not only its ASCII letters
    assert lower_same_length("İX ÇÖZÜM Ωμέγα") == "ix çözüm ωμέγα"


def _texts() -> list[str]:
    """Corpus texts plus mixtures that repeat triggers often (windows merge or give up)
    and put non-ASCII digits, invisible characters and homoglyphs among them."""
    from guard_corpus import load_corpus

    texts = [i.text for i in load_corpus()]
    rng = random.Random(15)
    parts = ["; cat /etc/passwd", "' or 'a'='a", "x = 1", "new instructions:", "no limits",
             "password: hunter2hunter2", "encryption_key=abcd1234efgh", "'token': 'x'",
             "<|im_start|>", "[INST]", "٣٤٥٦٧٨٩٠", "\u200b", "іgnоrе",
             "DE89 3704 0044 0532 0130 00", "+44 20 7946 0958", "or", "=", "|", "\n", " ",
             "ordinary words. "]  # fmt: skip
    texts += ["".join(rng.choice(parts) for _ in range(rng.randrange(1, 80))) for _ in range(300)]
    return texts


def _pattern_sets() -> list[tuple[Pattern, ...]]:
    from tracerl.guard import code_injection, jailbreak, secrets

    return [jailbreak._PHRASES, jailbreak._TEMPLATES, code_injection.ALL_PATTERNS, secrets.PATTERNS]


def test_anchored_patterns_find_near_their_triggers_what_the_whole_text_gives() -> None:
    anchored = [p for ps in _pattern_sets() for p in ps if p.width or p.lead >= 0]
    assert len(anchored) >= 11
    for text in _texts():
        low = lower_same_length(text)
        for p in anchored:
            subject = low if p.lower else text
            matches = [m.group().lower() for m in p.regex.finditer(subject)]
            # the promises that make windows and starts safe: each match holds a trigger,
            # one starting within `lead` of the match's start when there is a lead
            reach = p.lead if p.lead >= 0 else None
            assert all(any(t in m[: None if reach is None else reach + len(t)]
                           for t in p.triggers) for m in matches), p.regex
            whole = dataclasses.replace(p, width=0, lead=-1)
            assert list(p.findings("s", text, low)) == list(whole.findings("s", text, low))


def test_trigger_index_reports_exactly_the_triggers_in_the_text() -> None:
    for text in _texts():
        low = lower_same_length(text)
        for ps in _pattern_sets():
            triggers = {t for p in ps for t in p.triggers}
            assert trigger_index(ps).present(low) == {t for t in triggers if t in low}


def test_non_ascii_lists_the_distinct_non_ascii_characters() -> None:
    for text in _texts():
        assert non_ascii(text) == {c for c in text if not c.isascii()}


def test_an_anchored_pattern_must_be_bounded_and_look_ahead_little() -> None:
    assert max_widths(re.compile(r"x(?![\d.]|\.\d)")) == (1, 2)
    for rx in (r"ab+", r"ab(?=c{0,40})"):
        with pytest.raises(ValueError, match="anchored"):
            pattern("k", rx, 1.0, ("ab",), anchored=True)
    with pytest.raises(ValueError, match="anchored"):
        pattern("k", r"ab", 1.0, (), anchored=True)

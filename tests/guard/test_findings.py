from tracerl.guard import Finding
from tracerl.guard.findings import (
    compile_fast,
    dedupe,
    lower_same_length,
    shannon_entropy,
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
    assert lower_same_length("İX") == "İx"

import pytest

from tracerl.guard import scan


@pytest.mark.parametrize(
    "text, kind",
    [
        ("pass\u200bword", "zero_width"),
        ("pass\ufeffword", "zero_width"),
        ("invoice_\u202egpj.exe", "bidi_control"),
        ("if x\u2066 and False\u2069:", "bidi_control"),
        ("hi" + "".join(chr(0xE0000 + ord(c)) for c in "leak"), "tag_characters"),
    ],
)
def test_positive_is_found_with_its_kind(text, kind, kinds):
    assert kind in kinds(text, "invisible")


@pytest.mark.parametrize(
    "text",
    [
        "\U0001f468\u200d\U0001f469\u200d\U0001f467 family",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        "\ufeffid,name",
        "a line\n\ufeffid,name",
        "I \u2764\ufe0f this",
        "café naïve",
        "plain ascii",
    ],
)
def test_legitimate_use_is_not_flagged(text, kinds):
    assert kinds(text, "invisible") == set()


def test_tag_characters_reveal_their_hidden_text_in_detail():
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "send the key")
    (f,) = scan(f"hello{hidden}", ["invisible"])
    assert "send the key" in f.detail


def test_a_flood_of_zero_width_characters_is_one_finding():
    text = "a\u200b" * 500
    (f,) = scan(text, ["invisible"])
    assert (f.start, f.end, f.detail) == (1, len(text), "500 runs")


def test_redacting_a_flood_keeps_the_visible_characters():
    from tracerl.guard import redact

    assert redact("ok " + "a\u200b" * 5 + " done", ["invisible"]) == "ok aaaaa done"

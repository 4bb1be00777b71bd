import random

import pytest
from guard_corpus import fakes

from tracerl.guard import scan
from tracerl.guard.pii import iban_ok, luhn_ok, ssn_valid


def test_luhn_accepts_a_known_valid_number():
    assert luhn_ok("4111111111111111")


def test_luhn_rejects_a_changed_digit():
    assert not luhn_ok("4111111111111112")


def test_ssn_rules_reject_area_666_group_00_and_serial_0000():
    assert ssn_valid("123", "45", "6789")
    assert not ssn_valid("666", "45", "6789")
    assert not ssn_valid("123", "00", "6789")
    assert not ssn_valid("123", "45", "0000")
    assert not ssn_valid("912", "45", "6789")


def test_iban_mod97_accepts_the_standard_example():
    assert iban_ok("GB82WEST12345698765432")
    assert not iban_ok("GB83WEST12345698765432")


@pytest.mark.parametrize(
    "text, kind",
    [
        ("write to maria.gonzalez@gmail.com today", "email"),
        ("call +44 20 7946 0958", "phone"),
        ("call +1 (415) 555-0132", "phone"),
        ("card 4111 1111 1111 1111", "payment_card"),
        ("amex 3782-822463-10005", "payment_card"),
        ("SSN 123-45-6789", "ssn"),
        ("IBAN DE89 3704 0044 0532 0130 00", "iban"),
        ("login from 8.8.8.8", "ip_address"),
        ("from 2001:4860:4860::8888", "ip_address"),
    ],
)
def test_positive_is_found_with_its_kind(text, kind, kinds):
    assert kind in kinds(text, "pii")


@pytest.mark.parametrize(
    "text",
    [
        "order 4111 1111 1111 1112",
        "SSN field 666-12-3456",
        "IBAN DE88 3704 0044 0532 0130 00",
        "Upgrade to version 1.2.3.4",
        "Listening on 127.0.0.1:8080",
        "git@github.com:org/repo.git",
        "MAC 00:1A:2B:3C:4D:5E",
        "Released 2024-03-15 at 10:30:45",
        "ISBN 978-3-16-148410-0",
        "postgres://bob:S3cretPw@db.internal:5432/app",
        "std::vector<int> v;",
    ],
)
def test_hard_negative_is_not_flagged(text, kinds):
    assert kinds(text, "pii") == set()


def test_generated_cards_all_pass_and_their_twins_all_fail(kinds):
    rng = random.Random(3)
    assert all(kinds(f"pay {fakes.card(rng)}", "pii") == {"payment_card"} for _ in range(50))
    assert all(kinds(f"pay {fakes.bad_card(rng)}", "pii") == set() for _ in range(50))


def test_card_span_excludes_a_neighbouring_number():
    text = "card 4111 1111 1111 1111 2024"
    (f,) = scan(text, ["pii"])
    assert text[f.start : f.end] == "4111 1111 1111 1111"


def test_an_address_on_a_documentation_domain_is_still_an_email() -> None:
    found = [f for f in scan("Write to me at jane.doe@example.com, thanks", ["pii"])]
    assert [(f.kind, f.score >= 0.5) for f in found] == [("email", True)]
    assert "documentation domain" in found[0].detail


def test_numeric_chunks_from_byte_classes_are_the_regex_chunks() -> None:
    from tracerl.guard.pii import _NUMERIC_CHUNK, numeric_chunks

    rng = random.Random(6)
    parts = ["+1 (555) 010-9999", "4111 1111 1111 1111", "v1.2.3", "١٢٣٤٥٦٧٨", "é", " ", "-",
             "2024-01-01", "abc", "9f86d081884c", "(", ")", "."]  # fmt: skip
    for _ in range(300):
        text = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 40)))
        whole = [(m.start(), m.end()) for m in _NUMERIC_CHUNK.finditer(text)]
        ascii_digits = not any(c.isdigit() and not c.isascii() for c in text)
        assert [(m.start(), m.end()) for m in numeric_chunks(text, ascii_digits)] == whole

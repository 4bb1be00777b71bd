"""PII scanner: e-mail, international phone numbers, payment cards, US SSNs, IBANs, IPs.

Every numeric kind is validated, not just shaped: cards by the Luhn checksum and an
issuer prefix, SSNs by the SSA allocation rules (no area 000/666/9xx, no group 00, no
serial 0000), IBANs by the ISO 13616 mod-97 check and the country's length, IPs by
octet range. That is what keeps order ids, timestamps and hashes from being flagged.
E-mail is found by scanning out from each '@' so that no regex ever starts at every
position of a long run of word characters.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from tracerl.guard.findings import (
    Finding,
    Pattern,
    Validator,
    Verdict,
    ascii_bytes,
    dedupe,
    lower_same_length,
    non_ascii,
    pattern,
)

_LOCAL = re.compile(r"[A-Za-z0-9._%+-]{1,64}")
_DOMAIN = re.compile(r"[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,6}\.[A-Za-z]{2,24}\b")
_RESERVED_DOMAINS = ("example.com", "example.org", "example.net", ".example", ".test",
                     ".invalid", ".localhost")  # fmt: skip
_NOT_MAILBOX = ("git", "noreply", "no-reply")


def email_findings(name: str, text: str) -> list[Finding]:
    """Addresses found by matching the local part backwards and the domain forwards of '@'."""
    out = []
    at = text.find("@")
    while at != -1:
        head = text[max(0, at - 64) : at][::-1]
        lm = _LOCAL.match(head)
        dm = _DOMAIN.match(text, at + 1)
        if lm and dm:
            local = lm.group()[::-1].lstrip(".")
            domain = dm.group().lower()
            lead = text[at - len(local) - 1 : at - len(local)] if at > len(local) else ""
            if (
                local
                and lead not in (":", "/")  # user:password@host in a URL, not a mailbox
                and local.lower() not in _NOT_MAILBOX
            ):
                # A documentation domain is still an address someone typed (issue 15):
                # reported like any other, and named so a reader can allow-list it.
                doc = "documentation domain (RFC 2606)" if domain.endswith(
                    _RESERVED_DOMAINS) else ""
                out.append(Finding(name, "email", at - len(local), dm.end(), 0.95, doc))
        at = text.find("@", at + 1)
    return out


def luhn_ok(digits: str) -> bool:
    """The Luhn mod-10 checksum used by every payment card number."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card_issuer(d: str) -> bool:
    """Visa, Mastercard (51-55, 2221-2720), Amex, Discover, JCB, Diners, UnionPay prefixes."""
    n2, n4 = int(d[:2]), int(d[:4])
    return (
        d[0] == "4"
        and len(d) in (13, 16, 19)
        or (51 <= n2 <= 55 or 2221 <= n4 <= 2720)
        and len(d) == 16
        or n2 in (34, 37)
        and len(d) == 15
        or (d.startswith("6011") or n2 == 65 or 644 <= int(d[:3]) <= 649)
        and len(d) in (16, 19)
        or 3528 <= n4 <= 3589
        and len(d) in (16, 19)
        or (n2 in (36, 38, 39) or 300 <= int(d[:3]) <= 305)
        and len(d) in (14, 16, 19)
        or n2 == 62
        and 16 <= len(d) <= 19
    )


_DIGITS = re.compile(r"\d{1,19}")


def _card(m: re.Match[str], text: str) -> Verdict:
    """Try each run of whole digit groups holding 13-19 digits (the candidate may have
    swallowed a neighbouring number)."""
    groups = _DIGITS.findall(m.group())
    if sum(map(len, groups)) < 13:
        return None
    offsets = [g.start() for g in _DIGITS.finditer(m.group())]
    for i in range(len(groups)):
        d = ""
        for j in range(i, len(groups)):
            d += groups[j]
            if len(d) > 19:
                break
            if len(d) >= 13 and _card_issuer(d) and luhn_ok(d):
                start = m.start() + offsets[i]
                return 0.95, start, m.start() + offsets[j] + len(groups[j])
    return None


def ssn_valid(area: str, group: str, serial: str) -> bool:
    """SSA rules: area not 000, 666 or 900-999; group not 00; serial not 0000."""
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _ssn(m: re.Match[str], text: str) -> float | None:
    if m.group(2) != m.group(4) or not ssn_valid(m.group(1), m.group(3), m.group(5)):
        return None
    return 0.9


# ISO 13616 lengths for the countries most often seen; others need 15-34 chars.
_IBAN_LEN = {
    "AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18,
    "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22,
    "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18,
    "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SA": 24, "SE": 24, "SI": 19, "SK": 24, "TR": 26,
    "AE": 23, "BR": 29, "IL": 23, "QA": 29, "UA": 29,
}  # fmt: skip


def iban_ok(iban: str) -> bool:
    """ISO 7064 mod 97-10: move the first four chars to the end, letters to 10..35."""
    moved = iban[4:] + iban[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def _iban(m: re.Match[str], text: str) -> Verdict:
    raw = m.group()
    compact = raw.replace(" ", "")
    length = _IBAN_LEN.get(compact[:2])
    candidates = [length] if length else range(min(34, len(compact)), 14, -1)
    for n in candidates:
        if n <= len(compact) and iban_ok(compact[:n]):
            end = _nth_non_space_end(raw, n)
            if end < len(raw) and raw[end] != " ":
                continue  # the number runs on: this prefix is not the whole IBAN
            return 0.95, m.start(), m.start() + end
    return None


def _nth_non_space_end(s: str, n: int) -> int:
    """Index just past the n-th non-space character of s."""
    seen = 0
    for i, ch in enumerate(s):
        seen += ch != " "
        if seen == n:
            return i + 1
    return len(s)


_VERSION_HEAD = re.compile(r"\b(?:[vV]|[Vv]ersion|[Rr]elease|[Vv]er\.?|OID)\s{0,2}$")


def _ipv4(m: re.Match[str], text: str) -> float | None:
    octets = [int(x) for x in m.group().split(".")]
    if any(o > 255 for o in octets):
        return None
    if _VERSION_HEAD.search(text, max(0, m.start() - 12), m.start()):
        return None
    try:
        ip = ipaddress.IPv4Address(m.group())
    except ValueError:  # "018.8.8.8": a leading zero (octal in some parsers) is no address
        return None
    if ip.is_loopback or ip.is_unspecified or ip.is_multicast or octets[0] == 255:
        return None
    return 0.6 if ip.is_private else 0.8


_V6_ANCHOR = re.compile(r":[0-9a-f]{0,4}:")
_HEX_COLON = frozenset("0123456789abcdef:")


def ipv6_findings(name: str, low: str) -> list[Finding]:
    """IPv6 addresses grown outwards from each `:hex:` anchor (a literal-first regex),
    at most 45 characters each way, so the work stays linear in the text."""
    out = []
    done = 0
    for m in _V6_ANCHOR.finditer(low):
        if m.start() < done:
            continue
        start, end = m.start(), m.end()
        while start > 0 and low[start - 1] in _HEX_COLON and m.start() - start < 39:
            start -= 1
        while end < len(low) and (low[end] in _HEX_COLON or low[end] == ".") and end - start < 45:
            end += 1
        done = end
        candidate = low[start:end].rstrip(".:")
        if candidate.count(":") < 3 or not any(c.isdigit() for c in candidate):
            continue
        try:
            ip = ipaddress.IPv6Address(candidate)
        except ValueError:
            continue
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
            out.append(Finding(name, "ip_address", start, start + len(candidate), 0.75))
    return out


def _phone(m: re.Match[str], text: str) -> float | None:
    digits = sum(c.isdigit() for c in m.group())
    if not 8 <= digits <= 15 or text[m.end() : m.end() + 1].isdigit():
        return None
    return 0.85


def _p(kind: str, rx: str, score: float, triggers: tuple[str, ...],
       validate: Validator | None = None, lower: bool = False) -> Pattern:  # fmt: skip
    return pattern(kind, rx, score, triggers, validate, lower=lower)


# Numeric kinds only run inside "numeric chunks": runs of digits and separators found
# by one charset-first scan. Each pattern then looks at a few short spans instead of
# every position of the text (measured: about 5x less time on 2 KB of prose and code).
_NUMERIC_CHUNK = re.compile(r"[\d+(][\d ().+-]{6,60}")
NUMERIC: tuple[Pattern, ...] = (
    _p(
        "phone",
        r"(?<![\w+])\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d[\d .-]{5,16}\d",
        0.85,
        (),
        _phone,
    ),
    _p("phone", r"(?<![\d-])\(?[2-9]\d{2}\)?[ .-]?[2-9]\d{2}[ .-]\d{4}(?![\d-])", 0.8, ()),
    _p("payment_card", r"(?<![\d.-])\d[\d -]{11,22}\d(?![\d.])", 0.95, (), _card),
    _p("ssn", r"(?<![\d-])(\d{3})([- ])(\d{2})([- ])(\d{4})(?![\d-])", 0.9, (), _ssn),
    _p("ip_address", r"(?<![\d.])\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?![\d.]|\.\d)", 0.8, (), _ipv4),
)
NUMERIC_NEEDS: tuple[tuple[int, str, int], ...] = (
    (8, "+", 1), (10, "", 0), (13, "", 0), (9, "- ", 2), (4, ".", 3))
"""For each NUMERIC pattern: the fewest digits a chunk must hold for the pattern (and its
validator) to accept anything in it, and how many of some characters it must hold
(phones with a country code need a "+", an SSN two separators, "-" or " ", an IPv4
address three dots). Most chunks of ordinary text (dates, versions, ids) fail these for
every numeric kind, so their five regex runs are skipped (issue 15, latency)."""
IBAN = Pattern("iban", re.compile(r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,34}"), 0.95, (), False, _iban,
               word_start=True)  # fmt: skip


_CHUNK_CLASSES = bytes(ord("d") if chr(i) in "0123456789 ().+-" else ord(" ") for i in range(256))
_IBAN_CLASSES = bytes(
    ord("u") if "A" <= chr(i) <= "Z" else ord("d") if "0" <= chr(i) <= "9" else ord(" ")
    for i in range(256)
)


def _ascii_digits_only(text: str) -> bool:
    """No non-ASCII character of `text` is a digit, so `\\d` means [0-9] on it."""
    return not any(c.isdigit() for c in non_ascii(text))


def numeric_chunks(text: str, ascii_digits: bool) -> Iterator[re.Match[str]]:
    """The matches of `_NUMERIC_CHUNK.finditer(text)`. When `\\d` means [0-9] on the text
    (`ascii_digits`), every chunk lies in a run of 7 or more of the characters
    `[0-9 ().+-]`, so the regex only runs over such runs, found with bytes.find on the
    text mapped to byte classes (as jailbreak._base64_spans does): the regex alone
    tries a match at every digit of hex ids and dates."""
    if not ascii_digits:
        yield from _NUMERIC_CHUNK.finditer(text)
        return
    cls = ascii_bytes(text).translate(_CHUNK_CLASSES)
    i = cls.find(b"d" * 7)
    while i != -1:
        stop = cls.find(b" ", i)
        stop = len(cls) if stop == -1 else stop
        yield from _NUMERIC_CHUNK.finditer(text, i, stop)
        i = cls.find(b"d" * 7, stop)


def _iban_possible(text: str, ascii_digits: bool) -> bool:
    """An IBAN starts with two letters A-Z and two digits; without such four characters
    in a row (with `\\d` meaning [0-9]) the IBAN regex cannot match."""
    return not ascii_digits or b"uudd" in ascii_bytes(text).translate(
        _IBAN_CLASSES)


class PIIScanner:
    """E-mail, phone, payment card (Luhn), SSN (SSA rules), IBAN (mod 97), IP addresses."""

    name = "pii"

    def scan(self, text: str) -> list[Finding]:
        found: list[Finding] = []
        ascii_digits = _ascii_digits_only(text)
        for chunk in numeric_chunks(text, ascii_digits):
            part = chunk.group()
            digits = sum(map(str.isdigit, part))  # isdigit counts every \d, and more
            for p, (least, chars, times) in zip(NUMERIC, NUMERIC_NEEDS, strict=True):
                if digits >= least and sum(map(part.count, chars)) >= times:
                    found.extend(p.findings(self.name, text, text, chunk.start(), chunk.end()))
        if _iban_possible(text, ascii_digits):
            found.extend(IBAN.findings(self.name, text, text))
        if "@" in text:
            found += email_findings(self.name, text)
        if ":" in text:
            found += ipv6_findings(self.name, lower_same_length(text))
        return dedupe(found)

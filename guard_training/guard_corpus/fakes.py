"""Seeded generators of realistic fake sensitive values for the labelled corpus.

Every value is synthetic: card numbers are Luhn-valid but random, IBANs carry correct
mod-97 check digits over random account numbers, keys follow the provider's published
shape with random bodies. The `bad_*` twins fail exactly one validity rule and make the
hard negatives.
"""

# ruff: noqa: E501  (tables of corpus text: one sample per line reads best)

from __future__ import annotations

import base64
import json
import random
import string

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def token(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def luhn_digit(body: str) -> str:
    """The check digit that makes body + digit pass Luhn."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return str((10 - total % 10) % 10)


_CARD_PREFIXES = (("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("34", 15), ("37", 15),
                  ("6011", 16), ("65", 16), ("3530", 16), ("4", 13))  # fmt: skip


def card(rng: random.Random) -> str:
    prefix, length = rng.choice(_CARD_PREFIXES)
    body = prefix + token(rng, length - len(prefix) - 1, string.digits)
    return body + luhn_digit(body)


def bad_card(rng: random.Random) -> str:
    good = card(rng)
    return good[:-1] + str((int(good[-1]) + rng.randint(1, 9)) % 10)


def format_card(rng: random.Random, number: str) -> str:
    sep = rng.choice([" ", "-", ""])
    if len(number) == 15:
        return sep.join([number[:4], number[4:10], number[10:]])
    return sep.join(number[i : i + 4] for i in range(0, len(number), 4))


def ssn(rng: random.Random) -> str:
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def bad_ssn(rng: random.Random) -> str:
    kind = rng.randrange(4)
    area = rng.choice(["000", "666", f"9{rng.randint(0, 99):02d}", f"{rng.randint(1, 665):03d}"])
    group = "00" if kind == 3 else f"{rng.randint(1, 99):02d}"
    serial = "0000" if area.isdigit() and kind == 2 else f"{rng.randint(1, 9999):04d}"
    if (
        area not in ("000", "666")
        and not area.startswith("9")
        and group != "00"
        and serial != "0000"
    ):
        area = "000"
    return f"{area}-{group}-{serial}"


_IBAN_SHAPES = {"DE": 18, "GB": 18, "FR": 23, "NL": 14, "ES": 20, "IT": 23, "BE": 12, "CH": 17}


def _iban_check(country: str, bban: str) -> str:
    moved = bban + country + "00"
    value = int("".join(str(int(ch, 36)) for ch in moved))
    return f"{98 - value % 97:02d}"


def iban(rng: random.Random, spaced: bool = True) -> str:
    country = rng.choice(sorted(_IBAN_SHAPES))
    n = _IBAN_SHAPES[country]
    bban = token(rng, 4, string.ascii_uppercase) + token(rng, n - 4, string.digits) if country in (
        "GB", "NL") else token(rng, n, string.digits)  # fmt: skip
    raw = country + _iban_check(country, bban) + bban
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4)) if spaced else raw


def bad_iban(rng: random.Random) -> str:
    good = iban(rng, spaced=False)
    check = (int(good[2:4]) + rng.randint(1, 50)) % 97
    raw = good[:2] + f"{max(check, 2):02d}" + good[4:]
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def public_ip(rng: random.Random) -> str:
    first = rng.choice([8, 23, 34, 52, 64, 81, 93, 104, 151, 185, 203, 212])
    return f"{first}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def ipv6(rng: random.Random) -> str:
    groups = ["2001", "db9" + rng.choice(HEX)] + [
        token(rng, rng.randint(1, 4), HEX) for _ in range(6)
    ]
    return ":".join(groups)


def phone(rng: random.Random) -> str:
    return rng.choice([
        f"+1 ({rng.randint(201, 989)}) {rng.randint(200, 989)}-{rng.randint(0, 9999):04d}",
        f"+44 20 {rng.randint(7000, 8999)} {rng.randint(0, 9999):04d}",
        f"+49 30 {rng.randint(100000, 999999)}",
        f"+33 1 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)}",
        f"+91 {rng.randint(70000, 99999)} {rng.randint(10000, 99999)}",
        f"+81-3-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        f"+61 2 {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}",
        f"+55 11 9{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
    ])  # fmt: skip


def jwt(rng: random.Random) -> str:
    def enc(obj: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    header = {"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    payload = {"sub": str(rng.randint(1000, 99999)), "iat": rng.randint(1_600_000_000, 1_800_000_000),
               "role": rng.choice(["user", "admin", "service"])}  # fmt: skip
    return f"{enc(header)}.{enc(payload)}.{token(rng, 43, ALNUM + '-_')}"


def private_key(rng: random.Random) -> str:
    kind = rng.choice(["RSA ", "OPENSSH ", "EC ", ""])
    body = "\n".join(token(rng, 64, B64) for _ in range(rng.randint(3, 8)))
    return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----"


def password(rng: random.Random) -> str:
    word = rng.choice(["Sunset", "blue", "Tiger", "maple", "Orbit", "river", "Falcon", "quartz"])
    return (
        word + token(rng, rng.randint(2, 5), string.digits) + rng.choice(["!", "#", "$", "", "_x"])
    )


def api_secret(rng: random.Random, n: int = 32) -> str:
    while True:
        value = token(rng, n)
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value):
            return value


def hex_digest(rng: random.Random, n: int) -> str:
    return token(rng, n, HEX)


def uuid(rng: random.Random) -> str:
    h = hex_digest(rng, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def host(rng: random.Random) -> str:
    return rng.choice(["pastebin-cdn.net", "get-tools.xyz", "update-check.io", "evil.example.net",
                       "203.0.113.7", "cdn.fastfiles.ru", "files.dropdrop.cc"])  # fmt: skip

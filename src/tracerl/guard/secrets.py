"""Secrets scanner: cloud and API keys, private keys, JWTs, connection-string passwords,
and high-entropy values judged with their context.

Provider formats are fixed prefixes (AKIA, ghp_, xoxb-, sk_live_, AIza, ...), so the
regexes start with a literal and cost little. Random-looking strings alone are not
flagged: hashes, UUIDs and commit ids are everywhere in agent traffic and are not
secrets. A high-entropy value counts only when its key says it is a secret
(`api_key = ...`, `Authorization: Bearer ...`), which is what keeps precision high.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from tracerl.guard.findings import (
    Finding,
    Pattern,
    Validator,
    pattern,
    run_patterns,
    shannon_entropy,
)

_PLACEHOLDER = re.compile(
    r"^(?:[$<{%]|\*{3}|x{3}|\.{3})|example|your[_-]?|placeholder|redacted|changeme|dummy"
    r"|^(?:none|null|true|false|undefined|test|password|passwd|pass|pwd|secret|token|string"
    r"|os\.environ|getenv|process\.env|env\b)",
    re.I,
)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,80}(?:\(\)?)?$")


def _looks_random(value: str, min_len: int = 16) -> bool:
    """Long enough, mixes character classes and has the entropy of a generated token."""
    if len(value) < min_len:
        return False
    classes = sum(
        (any(c.islower() for c in value), any(c.isupper() for c in value),
         any(c.isdigit() for c in value))
    )  # fmt: skip
    return classes >= 2 and shannon_entropy(value) >= 3.0


def _is_placeholder(value: str) -> bool:
    return bool(_PLACEHOLDER.search(value)) or len(set(value)) <= 2


def _not_example(m: re.Match[str], text: str) -> float | None:
    return None if "EXAMPLE" in m.group().upper() else 0.95


def _random_suffix(m: re.Match[str], text: str) -> float | None:
    return 0.9 if _looks_random(m.group(), 20) and not _is_placeholder(m.group(1)) else None


def _jwt(m: re.Match[str], text: str) -> float | None:
    head = m.group(1)
    try:
        header = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return 0.9 if isinstance(header, dict) and ("alg" in header or "typ" in header) else None


def _url_password(m: re.Match[str], text: str) -> float | None:
    """`scheme://user:password@host`: the password must be a literal, not a placeholder."""
    password = m.group(2)
    if _is_placeholder(password) or password.isdigit() and len(password) <= 5:
        return None
    return 0.9


def _assignment(m: re.Match[str], text: str) -> float | None:
    """`<secret-ish key> = <value>`: judged by the key and by how the value looks."""
    key, quoted, value = m.group(1), m.group(2), text[m.start(3) : m.end(3)]
    if _is_placeholder(value):
        return None
    if key.startswith(("pass", "pwd")):
        if len(value) < 6 or (not quoted and _IDENT.match(value)):
            return None  # `password = user_input` names a variable, it holds nothing
        return 0.85
    if "(" in value or not _looks_random(value):
        return None
    return 0.85


def _bearer(m: re.Match[str], text: str) -> float | None:
    value = text[m.start(1) : m.end(1)]
    return 0.9 if _looks_random(value) and not _is_placeholder(value) else None


def _p(
    kind: str,
    rx: str,
    score: float,
    triggers: tuple[str, ...],
    validate: Validator | None = None,
    lower: bool = False,
    group: int = 0,
    lead: int = -1,
) -> Pattern:
    return pattern(kind, rx, score, triggers, validate, lower=lower, group=group, lead=lead)


_KEYS = (
    r"api[_-]?key|apikey|secret[_-]?key|client[_-]?secret|secret|access[_-]?token|auth[_-]?token"
    r"|refresh[_-]?token|token|access[_-]?key|private[_-]?key|password|passwd|pwd|credentials?"
    r"|signing[_-]?key|encryption[_-]?key|webhook[_-]?secret"
)

_KEYS_LEAD = 11
"""Each name in _KEYS holds a trigger of secret_assignment at most this far from its
start ("encryption_key": "key" at 11), so a match starts at most 11 characters before
one of the triggers' occurrences."""

PATTERNS: tuple[Pattern, ...] = (
    _p("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b", 0.95, (), _not_example),
    _p(
        "github_token",
        r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}",
        0.95,
        ("gh", "github_pat_"),
    ),
    _p("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,64}", 0.95, ("glpat-",)),
    _p("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,100}", 0.95, ("xox",)),
    _p(
        "slack_webhook",
        r"https://hooks\.slack\.com/services/T[A-Z0-9]{6,12}/B[A-Z0-9]{6,12}/"
        r"[A-Za-z0-9]{16,32}",
        0.9,
        ("hooks.slack.com",),
    ),
    _p(
        "stripe_key",
        r"\b(?:sk|rk)_(?:live|test)_([A-Za-z0-9]{16,128})\b",
        0.95,
        ("_live_", "_test_"),
        _random_suffix,
    ),
    _p("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", 0.9, ("aiza",)),
    _p("anthropic_key", r"\bsk-ant-[a-z0-9]{2,10}-[A-Za-z0-9_-]{32,200}", 0.95, ("sk-ant-",)),
    _p(
        "openai_key",
        r"\bsk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,200})(?![A-Za-z0-9_-])",
        0.9,
        ("sk-",),
        _random_suffix,
    ),
    _p("huggingface_token", r"\bhf_([A-Za-z0-9]{30,40})\b", 0.9, ("hf_",), _random_suffix),
    _p("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}\b", 0.95, ()),
    _p("npm_token", r"\bnpm_([A-Za-z0-9]{36})\b", 0.9, ("npm_",), _random_suffix),
    _p("pypi_token", r"\bpypi-AgE[A-Za-z0-9_-]{50,300}", 0.95, ("pypi-age",)),
    _p("twilio_key", r"\bSK[0-9a-f]{32}\b", 0.75, ("sk",)),
    _p("azure_storage_key", r"AccountKey=[A-Za-z0-9+/]{80,90}={0,2}", 0.95, ("accountkey=",)),
    _p(
        "private_key",
        r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP |SSH2 )?PRIVATE KEY"
        r"(?: BLOCK)?-----",
        0.99,
        ("private key",),
    ),
    _p(
        "jwt",
        r"\b(eyJ[A-Za-z0-9_-]{8,2000})\.eyJ[A-Za-z0-9_-]{2,8000}\.[A-Za-z0-9_-]{8,2000}",
        0.9,
        ("eyj",),
        _jwt,
    ),
    _p(
        "connection_string_password",
        r"://([^\s:/@'\"]{0,128}):([^\s@/'\"]{1,256})@[^\s/'\"]{1,256}",
        0.9,
        ("://",),
        _url_password,
    ),
    _p(
        "secret_assignment",
        r"(" + _KEYS + r")[\w.-]{0,30}?['\"]?\s{0,3}(?:=>|:=|[:=])\s{0,3}"
        r"(['\"]?)([^\s'\"`,;<>(){}\[\]]{4,512})",
        0.85,
        ("key", "secret", "token", "pass", "pwd", "credential"),
        _assignment,
        True,
        3,
        _KEYS_LEAD,
    ),
    _p(
        "bearer_token",
        r"\b(?:bearer|token)\s{1,3}([a-z0-9._~+/-]{16,4096}=*)",
        0.9,
        ("bearer", "token "),
        _bearer,
        True,
        1,
    ),
    _p(
        "basic_auth",
        r"\bauthorization:\s{0,3}basic\s{1,3}[a-z0-9+/]{8,1024}={0,2}",
        0.85,
        ("basic",),
        None,
        True,
    ),
)


class SecretsScanner:
    """Provider key formats, private keys, JWTs, URL passwords, keyed high-entropy values."""

    name = "secrets"

    def scan(self, text: str) -> list[Finding]:
        out: list[Finding] = []
        covered = 0
        for f in run_patterns(self.name, PATTERNS, text):
            if f.kind == "private_key":
                if f.start < covered:
                    continue  # a header inside the block already reported
                f = _whole_key_block(f, text)
                covered = f.end
            out.append(f)
        return out


def _whole_key_block(f: Finding, text: str) -> Finding:
    """Extend a private-key header to its END line (or the end of a truncated block)."""
    end = text.find("-----END ", f.end, f.end + 16_000)
    if end != -1:
        close = text.find("-----", end + 9, end + 60)
        stop = close + 5 if close != -1 else end + 9
    else:  # truncated block: the base64 body runs until the first blank line
        blank = text.find("\n\n", f.end, f.end + 16_000)
        stop = blank if blank != -1 else min(len(text), f.end + 16_000)
    return Finding(f.scanner, f.kind, f.start, stop, f.score)

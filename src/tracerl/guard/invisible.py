"""Invisible and bidirectional control characters.

Zero-width characters hide words from reviewers and filters; bidi overrides and
isolates make code render differently from how it runs ("Trojan Source", Boucher and
Anderson, 2021, CVE-2021-42574); Unicode tag characters (U+E0000 block) carry a whole
hidden ASCII message that models read and humans do not ("ASCII smuggling"). Legitimate
uses are spared: ZWJ inside emoji sequences, ZWNJ between Persian/Arabic letters and a
byte-order mark at the very start of the text.
"""

from __future__ import annotations

import re
import unicodedata

from tracerl.guard.findings import Finding, non_ascii

_RANGES = ((0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x2069),
           (0xFEFF, 0xFEFF), (0xAD, 0xAD), (0x180E, 0x180E), (0x34F, 0x34F), (0x115F, 0x1160),
           (0x3164, 0x3164), (0xFFA0, 0xFFA0), (0xE0000, 0xE007F), (0xE0100, 0xE01EF))
"""The characters this scanner looks for (all non-ASCII), as inclusive ranges."""
_CHARS = frozenset(chr(c) for lo, hi in _RANGES for c in range(lo, hi + 1))
_RUN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _RANGES) + "]{1,4096}")
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_MARKS = frozenset("\u200e\u200f")
_MAYBE_LEGIT = frozenset(["\ufeff", "\u200c", "\u200d", "\u200e", "\u200f"])


_SINGLE = {"\u200b": ("zero_width", 0.85), "\u2060": ("zero_width", 0.85),
           "\u00ad": ("soft_hyphen", 0.6), "\u200e": ("bidi_mark", 0.6),
           "\u200f": ("bidi_mark", 0.6)}  # fmt: skip


def _kind(run: str) -> tuple[str, float]:
    if run in _SINGLE:
        return _SINGLE[run]
    if any(0xE0000 <= ord(c) <= 0xE007F for c in run):
        return "tag_characters", 0.95
    if any(0xE0100 <= ord(c) <= 0xE01EF for c in run):
        return "variation_selector_smuggling", 0.9
    if any(c in _BIDI for c in run):
        return "bidi_control", 0.9
    if all(c in _MARKS for c in run):
        return "bidi_mark", 0.6
    if run == "\u00ad":
        return "soft_hyphen", 0.6
    return "zero_width", 0.85


def _is_legit(text: str, start: int, end: int) -> bool:
    """BOM at offset 0, ZWJ between emoji, ZWNJ/ZWJ or RTL marks between RTL letters."""
    run = text[start:end]
    if run not in _MAYBE_LEGIT:
        return False
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    if run == "\ufeff":  # a byte-order mark left by concatenating files, unless inside a word
        return not (before.isalnum() and after.isalnum())
    if run == "\u200d" and before and after:
        return (
            unicodedata.category(before) == "So"
            or unicodedata.category(after) == "So"
            or (0x1F3FB <= ord(before) <= 0x1F3FF)
        )
    if run in ("\u200c", "\u200d", "\u200e", "\u200f") and (before or after):
        return any(c and unicodedata.bidirectional(c) in ("R", "AL") for c in (before, after))
    return False


def _hidden_ascii(run: str) -> str:
    """The ASCII text that a run of tag characters spells (shown in the finding detail)."""
    return "".join(chr(ord(c) - 0xE0000) for c in run if 0xE0020 <= ord(c) <= 0xE007E)


_GROUP_GAP = 16
"""Runs closer than this join one finding: a flood of zero-width characters is one
obfuscated region, and one finding per character would cost time and say nothing more."""


def strip_invisible(text: str) -> str:
    """`text` without the characters this scanner looks for (its redaction)."""
    return _RUN.sub("", text)


class InvisibleScanner:
    """Zero-width, bidi control, tag and filler characters that hide or reorder text."""

    name = "invisible"

    def scan(self, text: str) -> list[Finding]:
        if _CHARS.isdisjoint(non_ascii(text)):  # also every ASCII text
            return []
        out: list[Finding] = []
        group: list[re.Match[str]] = []
        for m in _RUN.finditer(text):
            if _is_legit(text, m.start(), m.end()):
                continue
            if group and m.start() - group[-1].end() > _GROUP_GAP:
                out.append(self._finding(group))
                group = []
            group.append(m)
        if group:
            out.append(self._finding(group))
        return out

    def _finding(self, runs: list[re.Match[str]]) -> Finding:
        kind, score = max((_kind(m.group()) for m in runs), key=lambda ks: ks[1])
        detail = f"{len(runs)} runs" if len(runs) > 1 else ""
        if kind == "tag_characters":
            hidden = "".join(_hidden_ascii(m.group()) for m in runs)
            detail = f"hidden text: {hidden[:80]!r}"
        return Finding(self.name, kind, runs[0].start(), runs[-1].end(), score, detail)

"""Undo cheap obfuscation before phrase matching: zero-width, homoglyph and leetspeak.

Attackers hide "ignore previous instructions" from naive filters by inserting
zero-width characters (ig\u200bnore), swapping Latin letters for Cyrillic or Greek
look-alikes (іgnоrе), using full-width forms, or writing leetspeak (1gn0r3). We map the
text to a canonical view and keep an offset map back to the original, so a match in
the view is reported on the original span. Every fold is one character to one
character except the removal of invisible characters, which the offset map absorbs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tracerl.guard.findings import non_ascii

INVISIBLE_CHARS = frozenset(
    [chr(c) for c in range(0x200B, 0x2010)]
    + [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2060, 0x2065)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    + ["\ufeff", "\u00ad", "\u180e", "\u034f"]
)

INVISIBLE_RE = re.compile("[" + "".join(sorted(INVISIBLE_CHARS)) + "]")

# Cyrillic and Greek letters that render like Latin ones (Unicode confusables, the
# lower-case subset that matters for English keywords), plus full-width ASCII.
_CONFUSABLES = {
    "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j",
    "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s",
    "т": "t", "υ": "u", "ν": "v", "ԝ": "w", "х": "x", "у": "y", "ɡ": "g", "ո": "n",
    "А": "a", "В": "b", "С": "c", "Е": "e", "Н": "h", "І": "i", "Ј": "j", "К": "k",
    "М": "m", "О": "o", "Р": "p", "Ѕ": "s", "Т": "t", "Х": "x", "У": "y",
    "α": "a", "ο": "o", "ρ": "p", "ε": "e", "ι": "i", "κ": "k", "τ": "t", "χ": "x",
    "Α": "a", "Β": "b", "Ε": "e", "Ζ": "z", "Η": "h", "Ι": "i", "Κ": "k", "Μ": "m",
    "Ν": "n", "Ο": "o", "Ρ": "p", "Τ": "t", "Υ": "y", "Χ": "x",
    "ℓ": "l", "ı": "i",
}  # fmt: skip
_FOLD = {ord(k): v for k, v in _CONFUSABLES.items()}
_FOLD.update({c: chr(c - 0xFEE0).lower() for c in range(0xFF01, 0xFF5F)})  # full-width
# str.translate walks non-ASCII text char by char in Python-level dict lookups; one
# regex scan for any foldable character first keeps ordinary Unicode text fast.
_FOLDABLE_RE = re.compile("[" + "".join(sorted(_CONFUSABLES)) + "\uff01-\uff5e]")
FOLDABLE = frozenset(_CONFUSABLES) | frozenset(map(chr, range(0xFF01, 0xFF5F)))
"""The characters _FOLDABLE_RE finds (all non-ASCII)."""

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t",
                       "@": "a", "$": "s", "!": "i", "|": "l", "+": "t"})  # fmt: skip


@dataclass(frozen=True)
class View:
    """A canonical lower-case view of a text plus a map from view to original offsets."""

    text: str
    offsets: tuple[int, ...] | None
    """offsets[i] is the original index of view char i; None means identity."""
    folded: bool
    """True when some character was removed or replaced by a homoglyph fold."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of view span [start, end)."""
        if self.offsets is None:
            return start, end
        if start >= len(self.offsets):
            return self.offsets[-1] + 1, self.offsets[-1] + 1
        return self.offsets[start], self.offsets[end - 1] + 1 if end > start else self.offsets[
            start
        ]


def canonical(text: str, low: str) -> View:
    """Strip invisible characters and fold homoglyphs; ASCII text is returned as is."""
    if text.isascii():
        return View(low, None, False)
    if not INVISIBLE_CHARS.isdisjoint(non_ascii(text)):  # INVISIBLE_RE.search(text)
        keep = [i for i, ch in enumerate(text) if ch not in INVISIBLE_CHARS]
        stripped = INVISIBLE_RE.sub("", low)
        folded = stripped.translate(_FOLD) if _FOLDABLE_RE.search(stripped) else stripped
        return View(folded, tuple(keep), True)
    if FOLDABLE.isdisjoint(non_ascii(low)):  # no match of _FOLDABLE_RE in low
        return View(low, None, False)
    folded = low.translate(_FOLD)
    return View(folded, None, folded != low)


def leet(view: View) -> View | None:
    """The view with leetspeak digits folded to letters, or None if there is none."""
    # encode(..., "replace") maps each non-ASCII char to one "?", keeping offsets, and lets
    # translate take its ASCII fast path (the leet table only touches ASCII anyway).
    text = view.text if view.text.isascii() else view.text.encode("ascii", "replace").decode()
    out = text.translate(_LEET)
    return None if out == text else View(out, view.offsets, True)

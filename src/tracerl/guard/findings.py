"""What a scanner reports, and the small pattern engine most scanners are built on.

A Finding never carries the matched text: a secret copied into a finding would be
leaked again by every log and trace that records it. Spans index into the scanned
string, so `redact` and readers can recover the text when they are allowed to.

Linear time (issue 6): CPython's `re` backtracks, so every pattern here is written
with bounded quantifiers and without nested quantifiers, and most patterns only run
when a cheap substring trigger occurs in the text (`str.__contains__` is a fast
two-way search). Validators then do the precise work (Luhn, mod 97, entropy) on the
few candidates, in Python, in time bounded by the candidate length.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Finding:
    """One suspicious span found by one scanner."""

    scanner: str
    """Name of the scanner that found it: "jailbreak", "secrets", ..."""
    kind: str
    """What it is, e.g. "instruction_override", "aws_access_key", "payment_card"."""
    start: int
    """Start offset (inclusive) in the scanned text."""
    end: int
    """End offset (exclusive) in the scanned text."""
    score: float
    """Confidence in [0, 1]; the Guard acts on findings at or above a rule's min_score."""
    detail: str = ""
    """Short human explanation; never contains the matched secret itself."""
    location: str = ""
    """Where the text came from, e.g. "arguments.command" for a tool-call field."""


@runtime_checkable
class Scanner(Protocol):
    """A guardrail check: text in, findings out. Must run in time linear in len(text)."""

    name: str

    def scan(self, text: str) -> list[Finding]: ...


_LAST_LOWER: tuple[str, str] = ("", "")
"""The last text lowered and its lower-case form: the five scanners of one `scan()` each
lower the same text, so four of the five lowerings are a lookup (one tuple, replaced
atomically, so sharing it across threads is safe)."""


def lower_same_length(text: str) -> str:
    """Lower-case `text` keeping every offset valid. The one character whose lower case
    is longer is Turkish 'İ' (str.lower gives 'i' and a combining dot); it becomes a
    plain 'i', as Turkish lower-cases it, so "İGNORE" reads as "ignore" and the rest of a
    Turkish text is lower-cased like any other."""
    global _LAST_LOWER
    last = _LAST_LOWER
    if last[0] is text:
        return last[1]
    low = text.lower()
    if len(low) != len(text):
        low = text.replace("\u0130", "i").lower()
    _LAST_LOWER = (text, low)
    return low


_LAST_NON_ASCII: tuple[tuple[str, frozenset[str]], ...] = ()
"""The distinct non-ASCII characters of the last two texts asked about (a text and its
lower-case view), shared by the scanners of one `scan()` like `_LAST_LOWER`."""


def non_ascii(text: str) -> frozenset[str]:
    """The distinct non-ASCII characters of `text`. Whether a text holds any character of
    a non-ASCII set (invisible, homoglyph, non-ASCII digit) is then a set operation on a
    few characters instead of a regex scan of the whole text (about 8 us per 2 KB each)."""
    global _LAST_NON_ASCII
    if text.isascii():
        return frozenset()
    last = _LAST_NON_ASCII
    for seen, chars in last:
        if seen is text:
            return chars
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    chars = frozenset(map(chr, set(codes[codes > 127].tolist())))
    _LAST_NON_ASCII = ((text, chars), *last[:1])
    return chars


_LAST_ASCII: tuple[tuple[str, bytes], ...] = ()
"""The byte strings of the last two texts asked about (a text and its lower-case view)."""


def ascii_bytes(text: str) -> bytes:
    """`text.encode("ascii", "replace")`: one byte per character, "?" for each non-ASCII
    one, so offsets stay valid; scanners map it to byte classes and search those with
    bytes.find. Several scanners need it for the same text, and on text with non-ASCII
    characters the encoding costs a few microseconds (an error handler per run of them),
    so it is kept for the last two texts, like `non_ascii`."""
    global _LAST_ASCII
    last = _LAST_ASCII
    for seen, data in last:
        if seen is text:
            return data
    data = text.encode("ascii", "replace")
    if not text.isascii():  # an ASCII text's encoding is a plain copy, not worth keeping
        _LAST_ASCII = ((text, data), *last[:1])
    return data


Verdict = float | tuple[float, int, int] | None
Validator = Callable[[re.Match[str], str], Verdict]
"""(match, original text) -> score, (score, start, end) to narrow the span, or None to drop."""


def _occurrences(low: str, triggers: Iterable[str], most: int) -> list[int] | None:
    """Every offset where one of `triggers` occurs in `low`, sorted; None once there are
    more than `most` (a pattern then reads the whole text instead)."""
    found: list[int] = []
    for t in triggers:
        i = low.find(t)
        while i != -1:
            if len(found) == most:
                return None
            found.append(i)
            i = low.find(t, i + 1)
    return sorted(found)


@dataclass(frozen=True)
class Pattern:
    """A regex candidate generator plus an optional validator that scores it."""

    kind: str
    regex: re.Pattern[str]
    score: float
    triggers: tuple[str, ...] = ()
    """Lower-case substrings; the regex runs only if one occurs (empty: always runs)."""
    lower: bool = False
    """Match against the lower-cased text instead of the original."""
    validate: Validator | None = None
    group: int = 0
    """Which regex group is the reported span."""
    word_start: bool = False
    """The match must not follow a word character (a leading \\b, checked in Python)."""
    width: int = 0
    """For an anchored pattern (every match holds one of its triggers), the longest match
    it can make, so the regex need only run near the triggers' occurrences
    (`windows`); 0 means the regex runs over the whole text."""
    lead: int = -1
    """When every match holds one of the triggers starting at most `lead` characters
    after the match's start (a long match whose keyword comes first, like
    "password = ..."), the regex is only tried at those few starts (`starts`); -1: no
    such promise."""

    def triggered(self, low: str) -> bool:
        """True when the regex must run: one of the triggers occurs (or there are none)."""
        for t in self.triggers:
            if t in low:
                return True
        return not self.triggers

    def windows(self, low: str, present: set[str] | None = None) -> list[tuple[int, int]] | None:
        """Where an anchored pattern's regex must run: around each occurrence of a
        trigger, from `width` before it (the earliest start of a match holding it) to
        `width` + _MARGIN after it (that match's end and any look-ahead past it, so the
        cut never changes a match), overlapping windows merged. None when the pattern is
        not anchored or the windows would cover most of the text anyway. `present`, when
        given, holds every trigger that occurs in `low` (others need no search)."""
        if not self.width:
            return None
        width = self.width
        # Windows of 2 * width + _MARGIN each: past this many, they would cover half the text.
        most = (len(low) // 2 + 2 * width) // (2 * width + _MARGIN)
        starts = _occurrences(low, self._present(present), most)
        if starts is None:
            return None
        out: list[tuple[int, int]] = []
        for i in starts:  # sorted, so each window ends after the one before
            lo, hi = max(0, i - width), i + width + _MARGIN
            if out and lo <= out[-1][1]:
                out[-1] = (out[-1][0], hi)
            else:
                out.append((lo, hi))
        return out

    def starts(self, low: str, present: set[str] | None = None) -> list[int] | None:
        """Where a match of a pattern with a `lead` can start: from `lead` characters
        before each trigger occurrence to the occurrence, in order. None when the
        pattern has no lead or the starts would be more than 1 in 8 of the text."""
        if self.lead < 0:
            return None
        found = _occurrences(low, self._present(present), len(low) // 8 // (self.lead + 1))
        if found is None:
            return None
        return sorted({s for i in found for s in range(max(0, i - self.lead), i + 1)})

    def _present(self, present: set[str] | None) -> Iterable[str]:
        """The pattern's triggers that may occur (all of them when `present` is None)."""
        return self.triggers if present is None else present.intersection(self.triggers)

    def findings(
        self, scanner: str, text: str, low: str, pos: int = 0, endpos: int | None = None,
        *, checked: bool = False, present: set[str] | None = None,
    ) -> Iterable[Finding]:
        """Findings in text[pos:endpos] (look-behinds still see the text before `pos`);
        `checked` says the caller already knows a trigger occurs, `present` (optional)
        which triggers occur in `low`."""
        if not checked and self.triggers and not self.triggered(low):
            return
        subject = low if self.lower else text
        end = len(subject) if endpos is None else endpos
        whole = pos == 0 and endpos is None
        wins = self.windows(low, present) if whole else None
        starts = self.starts(low, present) if whole and wins is None else None
        if wins is not None:
            matches: Iterable[re.Match[str]] = _windowed(self.regex, subject, wins)
        elif starts is not None:
            matches = _at_starts(self.regex, subject, starts)
        else:
            matches = self.regex.finditer(subject, pos, end)
        for m in matches:
            if self.word_start and follows_word(subject, m.start()):
                continue
            verdict = self.score if self.validate is None else self.validate(m, text)
            if verdict is None:
                continue
            if isinstance(verdict, tuple):
                yield Finding(scanner, self.kind, verdict[1], verdict[2], verdict[0])
            else:
                yield Finding(scanner, self.kind, m.start(self.group), m.end(self.group), verdict)


_MARGIN = 32
"""Characters kept past a window's last possible match end: look-aheads (at most a few
characters here) and `$` must see the text as it is, not the window's end."""


def _windowed(regex: re.Pattern[str], subject: str,
              windows: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    """The matches `regex.finditer(subject)` yields, when each lies inside a window and
    no window's end cuts a match short: each window is searched from the end of the
    last match (finditer never starts a match inside the previous one)."""
    done = 0
    for lo, hi in windows:
        for m in regex.finditer(subject, max(lo, done), hi):
            done = m.end()
            yield m


def _at_starts(regex: re.Pattern[str], subject: str, starts: list[int]
               ) -> Iterator[re.Match[str]]:
    """The matches `regex.finditer(subject)` yields, when every match starts at one of
    `starts` (sorted): the regex is tried at each start not inside the last match, as
    finditer tries every position after it."""
    done = 0
    for s in starts:
        if s >= done:
            m = regex.match(subject, s)
            if m is not None:
                done = m.end()
                yield m


def follows_word(text: str, pos: int) -> bool:
    """True when the character before `pos` is a word character (no \\b at `pos`)."""
    return pos > 0 and (text[pos - 1].isalnum() or text[pos - 1] == "_")


def compile_fast(rx: str, flags: int = 0) -> tuple[re.Pattern[str], bool]:
    """Compile `rx`, moving a leading \\b out of the regex (see `Pattern.word_start`).

    CPython's `re` finds a literal or charset prefix with a fast scan, but a leading
    \\b or look-behind disables that scan and costs about 25x (measured: 26 us vs 1 us
    on 2 KB). Patterns with several top-level \\b branches keep theirs.
    """
    if rx.startswith("\\b") and not _top_level_alternation(rx):
        return re.compile(rx[2:], flags), True
    return re.compile(rx, flags), False


def _top_level_alternation(rx: str) -> bool:
    """True when `rx` has a `|` outside every group and character class."""
    depth, i, in_class = 0, 0, False
    while i < len(rx):
        ch = rx[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if rx[i + 1 : i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
        i += 1
    return False


def pattern(
    kind: str,
    rx: str,
    score: float,
    triggers: tuple[str, ...] = (),
    validate: Validator | None = None,
    *,
    lower: bool = False,
    group: int = 0,
    flags: int = 0,
    anchored: bool = False,
    lead: int = -1,
) -> Pattern:
    """A Pattern from regex source, with the leading-\\b speed-up applied. `anchored`
    promises that every match holds one of `triggers` (in the lower-cased text), so the
    regex only runs near them (`Pattern.windows`); the regex must be bounded."""
    regex, word_start = compile_fast(rx, flags)
    width = 0
    if anchored:
        width, ahead = max_widths(regex)
        if not triggers or width == 0 or ahead > _MARGIN:
            raise ValueError(f"an anchored pattern needs triggers, a bounded regex and "
                             f"look-aheads of at most {_MARGIN} characters: {rx!r}")
    if lead >= 0 and (not triggers or word_start):
        raise ValueError(f"a pattern with a lead needs triggers and no leading \\b: {rx!r}")
    return Pattern(kind, regex, score, triggers, lower, validate, group, word_start, width,
                   lead)


def max_widths(regex: re.Pattern[str]) -> tuple[int, int]:
    """(the longest match `regex` can make, 0 when unbounded; the longest text any of its
    look-aheads reads, which may reach past the match's end)."""
    from re import _constants, _parser  # type: ignore[attr-defined]

    def ahead(node: object) -> int:
        if isinstance(node, _parser.SubPattern):
            return max((ahead(item) for item in node.data), default=0)
        if not isinstance(node, tuple | list):
            return 0
        if (len(node) == 2 and node[0] in (_constants.ASSERT, _constants.ASSERT_NOT)
                and node[1][0] == 1):  # a look-ahead: (op, (direction, subpattern))
            return max(int(min(node[1][1].getwidth()[1], 1 << 16)), ahead(node[1][1]))
        return max((ahead(item) for item in node), default=0)

    parsed = _parser.parse(regex.pattern, regex.flags)
    hi = parsed.getwidth()[1]
    return (0 if hi >= 1 << 16 else int(hi)), ahead(parsed)


def _trigram_ids(data: np.ndarray) -> np.ndarray:
    """A 16-bit hash of each byte trigram of `data` (uint8), by start."""
    return _trigrams_of(data.astype(np.uint16))


def _trigrams_of(d: np.ndarray) -> np.ndarray:
    """`_trigram_ids` of bytes already widened to uint16 (whose shifts wrap at 16 bits)."""
    return (d[:-2] << 10) ^ (d[1:-1] << 5) ^ d[2:]


@dataclass(frozen=True)
class ByteTables:
    """Which byte pairs and (hashed) byte trigrams occur in one text's UTF-8."""

    pairs: np.ndarray
    """64 K bools, by first byte << 8 | second byte."""
    trigrams: np.ndarray
    """64 K bools, by `_trigram_ids`."""


_LAST_TABLES: tuple[tuple[str, ByteTables | None], ...] = ()
"""The last two texts' tables: the scanners of one `scan()` look up their triggers in the
same lower-cased text, so the tables are built once per text, not once per scanner; the
second entry keeps them when the jailbreak scanner reads a leetspeak-folded copy in
between (one tuple, replaced atomically, like `_LAST_LOWER`; a table is never written
after it is built)."""


def byte_tables(low: str) -> ByteTables | None:
    """The ByteTables of `low`; None for text of fewer than 3 bytes."""
    global _LAST_TABLES
    last = _LAST_TABLES
    for seen, cached in last:
        if seen is low:
            return cached
    data = np.frombuffer(low.encode("utf-8", "replace"), np.uint8)
    tables = None
    if len(data) >= 3:
        d = data.astype(np.uint16)
        pairs = np.zeros(1 << 16, dtype=bool)
        pairs[(d[:-1] << 8) | d[1:]] = True
        trigrams = np.zeros(1 << 16, dtype=bool)
        trigrams[_trigrams_of(d)] = True
        tables = ByteTables(pairs, trigrams)
    _LAST_TABLES = ((low, tables), *last[:1])
    return tables


class TriggerIndex:
    """Which triggers of a tuple of patterns occur in a text, found in one numpy pass.

    Testing every trigger with `in` costs one scan of the text each: about 150 scans of
    2 KB for the built-in scanners, a fifth of a whole `scan()` (issue 15). Instead the
    text's byte pairs and byte trigrams go into tables once (`byte_tables`, shared by
    the scanners); an ASCII trigger of two characters occurs exactly when its pair does
    (ASCII bytes never occur inside a UTF-8 multi-byte character), and a longer one can
    only occur if all of its trigrams are in the table, so only those few candidates are
    confirmed with `in`. (A lone surrogate encodes as "?", so the pair table can
    over-report, never miss; a trigger only decides whether a regex runs.) Non-ASCII
    triggers and single characters are tested with `in` directly.
    """

    def __init__(self, patterns: tuple[Pattern, ...]) -> None:
        self.patterns = patterns
        triggers = sorted({t for p in patterns for t in p.triggers})
        self.direct = [t for t in triggers if len(t) == 1 or not t.isascii()]
        self.pairs = [t for t in triggers if len(t) == 2 and t.isascii()]
        self.pair_ids = np.array([ord(t[0]) << 8 | ord(t[1]) for t in self.pairs], np.intp)
        self.hashed = [t for t in triggers if len(t) >= 3 and t.isascii()]
        ids = [_trigram_ids(np.frombuffer(t.encode(), np.uint8)) for t in self.hashed]
        self.ids = np.concatenate(ids) if ids else np.zeros(0, np.uint32)
        self.firsts = np.cumsum([0] + [len(i) for i in ids[:-1]])

    def present(self, low: str) -> set[str]:
        """The triggers that occur in `low` (an ASCII trigger of one or two characters
        may be over-reported for text holding a lone surrogate)."""
        found = {t for t in self.direct if t in low}
        tables = byte_tables(low)
        if tables is None:
            return found | {t for t in (*self.pairs, *self.hashed) if t in low}
        if self.pairs:
            found.update(self.pairs[i] for i in tables.pairs[self.pair_ids].nonzero()[0])
        if self.hashed:
            maybe = np.logical_and.reduceat(tables.trigrams[self.ids], self.firsts)
            found.update(t for t in (self.hashed[i] for i in maybe.nonzero()[0]) if t in low)
        return found


_INDEXES: dict[int, TriggerIndex] = {}


def trigger_index(patterns: tuple[Pattern, ...]) -> TriggerIndex:
    """The TriggerIndex of a (module-level) tuple of patterns, built once."""
    index = _INDEXES.get(id(patterns))
    if index is None or index.patterns is not patterns:
        index = _INDEXES[id(patterns)] = TriggerIndex(patterns)
    return index


def run_patterns(
    scanner: str, patterns: Iterable[Pattern], text: str, *, low: str | None = None,
    present: set[str] | None = None,
) -> list[Finding]:
    """All findings of `patterns` over `text`, overlapping duplicates removed. `present`
    may give the triggers that occur in `low` (found for a larger tuple of patterns)."""
    low = lower_same_length(text) if low is None else low
    out: list[Finding] = []
    if not isinstance(patterns, tuple):
        for p in patterns:
            out.extend(p.findings(scanner, text, low))
        return dedupe(out)
    if present is None:
        present = trigger_index(patterns).present(low)
    for p in patterns:
        if not p.triggers or not present.isdisjoint(p.triggers):
            out.extend(p.findings(scanner, text, low, checked=True, present=present))
    return dedupe(out)


def dedupe(findings: list[Finding]) -> list[Finding]:
    """Drop findings contained in a stronger finding of the same scanner; sort by start.

    Sorted by start, a finding is covered exactly when the kept finding of its scanner
    that reaches furthest ends after it (and scores at least as high), so one pass with
    that finding per scanner suffices.
    """
    ordered = sorted(findings, key=lambda f: (f.start, -(f.end - f.start), -f.score))
    kept: list[Finding] = []
    reach: dict[str, Finding] = {}
    for f in ordered:
        cover = reach.get(f.scanner)
        if cover is not None and f.end <= cover.end and cover.score >= f.score:
            continue
        kept.append(f)
        if cover is None or f.end > cover.end:
            reach[f.scanner] = f
    return kept


def shannon_entropy(s: str) -> float:
    """Bits per character of `s` (0 for empty); used to tell random tokens from words."""
    if not s:
        return 0.0
    from math import log2

    n = len(s)
    counts: dict[str, int] = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    return -sum(c / n * log2(c / n) for c in counts.values())


def line_bounds(text: str, pos: int) -> tuple[int, int]:
    """Start and end offsets of the line holding `pos`, each looked for at most 400 chars away."""
    lo = text.rfind("\n", max(0, pos - 400), pos) + 1
    if lo == 0:
        lo = max(0, pos - 400)
    hi = text.find("\n", pos, pos + 400)
    return lo, (hi if hi != -1 else min(len(text), pos + 400))

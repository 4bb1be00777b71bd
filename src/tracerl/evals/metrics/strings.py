"""String checks on the final answer: phrase sets, length bounds, one line, prefix and
suffix, e-mail and URL presence.

Text is compared after Unicode NFC normalisation (a composed "é" equals "e" plus a
combining accent) and, unless `case_sensitive`, casefolding ("STRASSE" equals
"straße"). Phrases match as whole words by default, so "cat" is not found in
"concatenate"; a phrase that starts or ends with punctuation matches there as written.
Phrase lists come from the metric's options or, when those are empty, from a reference
field (a missing or malformed list is the data's fault: Unjudged). The policy's output
is always judged: an empty answer contains nothing and has length 0.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from tracerl.evals.fault import malformed_reference
from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult, unjudged

LengthUnit = Literal["chars", "words", "tokens"]
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+(?![\w-])")
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]]", re.IGNORECASE)


def fold(text: str, case_sensitive: bool = False) -> str:
    """NFC-normalised text, casefolded unless `case_sensitive`."""
    text = unicodedata.normalize("NFC", text)
    return text if case_sensitive else text.casefold()


def folded_answer(item: EvalItem, case_sensitive: bool) -> str:
    """The answer NFC-normalised (and casefolded), computed once per item."""
    return item.derived(f"fold:{case_sensitive}", lambda t: fold(t, case_sensitive))


@functools.lru_cache(maxsize=1024)
def phrase_pattern(phrase: str, whole_words: bool) -> re.Pattern[str]:
    """`phrase` literally; with `whole_words`, not inside a longer word."""
    body = re.escape(phrase)
    if whole_words:
        body = (r"(?<!\w)" if phrase[:1].isalnum() or phrase[:1] == "_" else "") + body
        body += r"(?!\w)" if phrase[-1:].isalnum() or phrase[-1:] == "_" else ""
    return re.compile(body)


def _phrases(item: EvalItem, given: Sequence[str], key: str) -> tuple[str, ...]:
    if given:
        return tuple(given)
    raw = item.require(key)
    if isinstance(raw, str):
        raw = [raw]
    if (not isinstance(raw, (list, tuple)) or not raw
            or not all(isinstance(p, str) and p for p in raw)):
        raise malformed_reference(key, "must be a non-empty list of non-empty strings")
    return tuple(raw)


@dataclass(frozen=True)
class _PhraseSet:
    phrases: tuple[str, ...] = ()
    reference_key: str = ""
    case_sensitive: bool = False
    whole_words: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.phrases, str) or any(not p for p in self.phrases):
            raise ValueError(f"{type(self).__name__}.phrases must be a tuple of non-empty "
                             f"strings, got {self.phrases!r}")

    def found(self, item: EvalItem) -> tuple[list[str], list[str]]:
        """(phrases present, phrases absent) in the output."""
        text = folded_answer(item, self.case_sensitive)
        present, absent = [], []
        for p in dict.fromkeys(_phrases(item, self.phrases, self.reference_key)):
            folded = fold(p, self.case_sensitive)  # not a substring: no match, no regex
            hit = folded in text and phrase_pattern(folded, self.whole_words).search(text)
            (present if hit else absent).append(p)
        return present, absent


@dataclass(frozen=True)
class ContainsAll(_PhraseSet):
    """Share of the required phrases the output contains; passed when it has all.

    >>> from tracerl.evals.items import item_from_text
    >>> ContainsAll(("Paris", "France"))(item_from_text("Paris is lovely")).score
    0.5
    """

    reference_key: str = "required_phrases"
    name: str = "contains_all"

    def __call__(self, item: EvalItem) -> MetricResult:
        present, absent = self.found(item)
        return MetricResult(len(present) / (len(present) + len(absent)), passed=not absent,
                            details={"missing": absent})


@dataclass(frozen=True)
class ContainsAny(_PhraseSet):
    """1.0 when the output contains at least one of the phrases.

    >>> from tracerl.evals.items import item_from_text
    >>> ContainsAny(("yes", "correct"))(item_from_text("That is correct.")).score
    1.0
    """

    reference_key: str = "any_phrases"
    name: str = "contains_any"

    def __call__(self, item: EvalItem) -> MetricResult:
        present, _ = self.found(item)
        return MetricResult(float(bool(present)), passed=bool(present),
                            details={"found": present})


@dataclass(frozen=True)
class ContainsNone(_PhraseSet):
    """Share of the forbidden phrases the output avoids; passed when it has none.

    >>> from tracerl.evals.items import item_from_text
    >>> ContainsNone(("as an AI", "sorry"))(item_from_text("Sorry, as an AI I can't")).score
    0.0
    """

    reference_key: str = "forbidden_phrases"
    name: str = "contains_none"

    def __call__(self, item: EvalItem) -> MetricResult:
        present, absent = self.found(item)
        return MetricResult(len(absent) / (len(present) + len(absent)), passed=not present,
                            details={"found": present})


def text_length(item: EvalItem, unit: LengthUnit) -> int | None:
    """Length of the final answer: NFC code points, whitespace-separated words, or the
    final turn's sampled tokens (None when no token ids were recorded)."""
    if unit == "tokens":
        turns = item.trajectory.turns
        return len(turns[-1].action_ids) if turns and turns[-1].action_ids else None
    text = unicodedata.normalize("NFC", item.output_text())
    return len(text) if unit == "chars" else len(text.split())


@dataclass(frozen=True)
class LengthBounds:
    """1.0 when min_len <= length <= max_len; outside, graded: length / min_len when too
    short, max_len / length when too long (so a reward still points the right way).

    >>> from tracerl.evals.items import item_from_text
    >>> LengthBounds(max_len=2, unit="words")(item_from_text("one two three four")).score
    0.5
    """

    min_len: int | None = None
    max_len: int | None = None
    unit: LengthUnit = "chars"
    name: str = "length"

    def __post_init__(self) -> None:
        if self.unit not in ("chars", "words", "tokens"):
            raise ValueError(f"LengthBounds.unit must be chars, words or tokens, got {self.unit!r}")
        if self.min_len is None and self.max_len is None:
            raise ValueError("LengthBounds needs min_len, max_len or both")
        lo, hi = self.min_len or 0, self.max_len
        if lo < 0 or (hi is not None and hi < lo):
            raise ValueError(f"LengthBounds needs 0 <= min_len <= max_len, got {lo}, {hi}")

    def __call__(self, item: EvalItem) -> MetricResult:
        n = text_length(item, self.unit)
        if n is None:
            return unjudged("no token ids recorded (unit='tokens')")
        lo, hi = self.min_len or 0, self.max_len
        if n < lo:
            value = n / lo
        elif hi is not None and n > hi:
            value = hi / n
        else:
            value = 1.0
        return MetricResult(value, passed=value == 1.0, details={"length": n, "unit": self.unit})


@dataclass(frozen=True)
class OneLine:
    """1.0 when the answer is exactly one non-empty line (an empty answer is not one
    line; every Unicode line break counts, not only "\\n").

    >>> from tracerl.evals.items import item_from_text
    >>> OneLine()(item_from_text("42\\u2028(approximately)")).score
    0.0
    """

    name: str = "one_line"

    def __call__(self, item: EvalItem) -> MetricResult:
        lines = item.output_text().strip().splitlines()
        ok = len(lines) == 1
        return MetricResult(float(ok), passed=ok, details={"lines": len(lines)})


@dataclass(frozen=True)
class _Affix:
    affix: str | None = None
    reference_key: str = ""
    case_sensitive: bool = False
    strip: bool = True

    at_end: ClassVar[bool] = False

    def __call__(self, item: EvalItem) -> MetricResult:
        affix = self.affix
        if affix is None:
            affix = item.require(self.reference_key)
            if not isinstance(affix, str) or not affix:
                raise malformed_reference(self.reference_key, "must be a non-empty string")
        text = item.output_text().strip() if self.strip else item.output_text()
        text, affix = fold(text, self.case_sensitive), fold(affix, self.case_sensitive)
        ok = text.endswith(affix) if self.at_end else text.startswith(affix)
        return MetricResult(float(ok), passed=ok)


@dataclass(frozen=True)
class StartsWith(_Affix):
    """Does the answer (stripped of surrounding whitespace) start with the prefix?

    >>> from tracerl.evals.items import item_from_text
    >>> StartsWith("Answer:")(item_from_text("  answer: 42")).score
    1.0
    """

    reference_key: str = "prefix"
    name: str = "starts_with"


@dataclass(frozen=True)
class EndsWith(_Affix):
    """Does the answer (stripped of surrounding whitespace) end with the suffix?

    >>> from tracerl.evals.items import item_from_text
    >>> EndsWith("?")(item_from_text("Is it?  ")).score
    1.0
    """

    reference_key: str = "suffix"
    name: str = "ends_with"
    at_end: ClassVar[bool] = True


@dataclass(frozen=True)
class _Presence:
    present: bool = True
    """True: the answer must contain one; False: it must contain none."""
    whole: bool = False
    """The whole (stripped) answer must be one (only with present=True)."""
    pattern: ClassVar[re.Pattern[str]]
    marker: ClassVar[str]
    """A literal every match contains: a text without it has none (skips the regex)."""

    def __call__(self, item: EvalItem) -> MetricResult:
        text = item.output_text().strip()
        if self.marker not in text:
            ok = not self.present and not self.whole
            return MetricResult(float(ok), passed=ok,
                                details={} if self.whole else {"count": 0})
        if self.whole:
            ok = self.pattern.fullmatch(text) is not None
            return MetricResult(float(ok), passed=ok)
        found = self.pattern.findall(text)
        ok = bool(found) == self.present
        return MetricResult(float(ok), passed=ok, details={"count": len(found)})


@dataclass(frozen=True)
class ContainsEmail(_Presence):
    """An e-mail address in the answer (`present=False`: none; `whole=True`: the answer
    is one address). Unicode letters count in both parts (internationalised mail).

    >>> from tracerl.evals.items import item_from_text
    >>> ContainsEmail()(item_from_text("Write to zoë@exämple.de today")).score
    1.0
    """

    name: str = "contains_email"
    pattern: ClassVar[re.Pattern[str]] = _EMAIL
    marker: ClassVar[str] = "@"


@dataclass(frozen=True)
class ContainsUrl(_Presence):
    """An http(s) or ftp URL in the answer (`present=False`: none; `whole=True`: the
    answer is one URL). Trailing sentence punctuation is not part of the URL.

    >>> from tracerl.evals.items import item_from_text
    >>> ContainsUrl(whole=True)(item_from_text("https://example.org/a?b=1")).score
    1.0
    """

    name: str = "contains_url"
    pattern: ClassVar[re.Pattern[str]] = _URL
    marker: ClassVar[str] = "://"

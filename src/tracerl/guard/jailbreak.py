"""Jailbreak and prompt-injection scanner.

Covers the families named in issue 6: instruction overrides ("ignore all previous
instructions"), role-play jailbreaks ("pretend you are an AI without restrictions"),
system-prompt extraction, chat-template token injection (<|im_start|>, [INST],
<tool_call>, ...), and obfuscated variants of all of these: zero-width characters,
homoglyphs and full-width forms (folded by `normalize.canonical`), leetspeak
(`normalize.leet`), and base64 payloads that decode to an attack.

Phrases match on a lower-cased canonical view; a match that only appears after a fold
is reported with kind "obfuscation" and the fold named in `detail`. Paraphrases, other
languages, fake instruction headers and indirect injections that no phrase names are
the job of a small learned detector over the same view (override_model.py, issue 15);
its findings say "override detector" in `detail`.
"""

from __future__ import annotations

import base64
import binascii
import re

import numpy as np

from tracerl.guard import override_model
from tracerl.guard.findings import (
    Finding,
    Pattern,
    Validator,
    ascii_bytes,
    dedupe,
    line_bounds,
    lower_same_length,
    pattern,
    run_patterns,
    trigger_index,
)
from tracerl.guard.normalize import View, canonical, leet

CLASSIFIER_MIN_P = override_model.DOCUMENT_P
"""The detector's probability at which a document or tool output is flagged (findings
at or above it score at least 0.5, the Guard's default rule). The detector also reports
weaker spans, down to its user-prompt threshold (`OverrideModel.prompt_p`), with their
probability as the score: the Guard's `prompt` rules flag those in user messages only
(guard/config.py, docs/guard.md "Thresholds by where the text comes from")."""
_GAP = r"[^.!?\n]{0,60}?"
_NEG = re.compile(r"\b(?:not|never|don't|do not|cannot|can't|won't|must not|shouldn't)\b")

_OVERRIDE = (
    r"\b(?:ignore|disregard|forget|override|bypass|abandon|discard|neglect)\b" + _GAP
    + r"\b(?:instructions?|prompts?|directives?|guidelines|rules|constraints|policies"
    r"|programming|guardrails?|restrictions|safeguards)\b"
)  # fmt: skip
_QUALIFIER = re.compile(
    r"\b(?:previous|prior|above|earlier|preceding|foregoing|all|any|every|your|system"
    r"|original|initial|developer|safety|existing|current|those|these|my)\b"
)
_NEW_ORDERS = (
    r"\b(?:new|updated|real|actual|true|revised|secret|hidden|urgent|additional)\s{1,3}"
    r"(?:system\s{1,3})?(?:instructions?|directives?|orders|task|prompt)\s{0,3}:"
)
_MODE = (
    r"\b(?:enable|enabled|activate|activated|enter|entering|switch to|now in)\s{1,3}"
    r"(?:the\s{1,3})?(?:dan|god|jailbreak|jailbroken|unrestricted|unfiltered|evil)\s{1,3}mode\b"
    r"|\b(?:developer|dan|god|jailbreak|unrestricted|evil)\s{1,3}mode\s{0,3}(?:enabled|activated|on)\b"
    r"|\b(?:system|admin|root)\s{1,3}override\b|\bdo anything now\b"
)
_YOU_ARE_NOW = (
    r"\byou are now\b" + _GAP + r"\b(?:dan|unrestricted|unfiltered|uncensored|jailbroken"
    r"|free from|no longer bound|not bound|without (?:any )?(?:limits|restrictions|rules|filters)"
    r"|liberated|evil|able to do anything)"
)
_NO_LIMITS = (
    r"\b(?:no|without|free (?:from|of)|not bound by|unbound by|ignoring|zero)\s{1,3}"
    r"(?:any\s{1,3}|all\s{1,3}|your\s{1,3}|the\s{1,3})?(?:ethical\s{1,3}|moral\s{1,3}"
    r"|content\s{1,3}|safety\s{1,3}|openai\s{1,3}|usual\s{1,3})?(?:restrictions|rules"
    r"|filters?|filtering|limits|limitations|guidelines|ethics|morals|censorship"
    r"|polic(?:y|ies)|boundaries|safeguards)\b"
)
_FRAME = re.compile(
    r"\b(?:pretend|imagine|act as|acting as|roleplay|role-play|role play|play the role"
    r"|you are|you're|persona|character|simulate|from now on|respond as|answer as|behave as"
    r"|stay in character|hypothetical)"
)
_PERSONA = (
    r"\b(?:unfiltered|uncensored|amoral|unrestricted|unaligned|jailbroken|evil)\s{1,3}"
    r"(?:ai|assistant|model|chatbot|version|persona|character|twin|mode)\b"
    r"|\bnever\s{1,3}(?:refuses?|break(?:s)? character|says? no)\b"
)
_LEAK = (
    r"\b(?:reveal|print|show|repeat|output|display|leak|tell me|give me|dump|write out"
    r"|recite|send|exfiltrate)\b[^.!?\n]{0,30}?\b(?:your|the)\s{1,3}(?:full\s{1,3}|entire"
    r"\s{1,3}|exact\s{1,3})?(?:system prompt|system message|initial (?:prompt|instructions)"
    r"|hidden (?:prompt|instructions)|original (?:prompt|instructions)|instructions above"
    r"|secret instructions|developer (?:prompt|message)|api keys?|credentials)"
)
_TO_AI = (
    r"\b(?:note|message|attention|instructions?|important)(?:\s{1,3}(?:to|for))?\s{1,3}"
    r"(?:the\s{1,3}|any\s{1,3}|all\s{1,3})?(?:ai\s{1,3}|llm\s{1,3})?(?:ai|assistant|llm"
    r"|language model|agent|chatbot|model)s?\s{0,3}[:,-]"
    r"|\b(?:ai|assistant|agent)s?\s{1,3}(?:reading|processing|summari[sz]ing) this\b"
    r"|\binstead,?\s{1,3}(?:you must|you should|please)\s{1,3}(?:send|email|forward|upload"
    r"|post|transfer|run|execute|delete)\b"
)
_TEMPLATE = re.compile(
    r"<\|[a-z_]{2,24}\|>|\[/?inst\]|<</?sys>>|</?tool_call>|</?tool_response>"
    r"|</?function_call>|<start_of_turn>|<end_of_turn>|<｜[^｜\n]{1,30}｜>"
)  # fmt: skip
_BASE64_CLASSES = bytes(
    ord("b") if chr(i).isascii() and (chr(i).isalnum() or chr(i) in "+/") else ord(" ")
    for i in range(256)
)
_BASE64_RUN = b"b" * 24
_CLASSES = bytes(
    ord("h") if chr(i) in "abcdef" else ord("g") if "g" <= chr(i) <= "z"
    else ord("l") if chr(i) in "013457@$|+" else ord(" ")
    for i in range(256)
)
"""Byte class of each ASCII character: h = hex letter, g = other letter, l = a digit or
symbol leetspeak puts in place of a letter, space = anything else."""


def _leet_inside(text: str) -> list[int]:
    """Offsets of a digit or symbol between two letters, one of them outside a-f, in
    order: hex digests and UUIDs (and most e-mail addresses) never qualify, while every
    leetspeak form of the words the phrases need does ("1gn0r3" has n0r, "pr3v10us" r3v).
    The text becomes a string of classes and the two shapes ("gl", "lg") are found with
    bytes.find: a character-class regex costs about 20 ns a character here."""
    cls = ascii_bytes(text).translate(_CLASSES)
    if cls.count(b"gl") + cls.count(b"lg") > _LEET_LOOP_MOST:
        return _leet_inside_flood(cls)
    out = set()
    for shape, mid in ((b"gl", 1), (b"lg", 0)):
        i = cls.find(shape)
        while i != -1:
            j = i + mid  # the leet character
            if j > 0 and cls[j - 1] in b"gh" and cls[j + 1 : j + 2] in (b"g", b"h"):
                out.add(j)
            i = cls.find(shape, i + 1)
    return sorted(out)


_LEET_LOOP_MOST = 64
"""More "gl"/"lg" shapes than this (a flood of leetspeak): `_leet_inside_flood`."""


def _leet_inside_flood(cls: bytes) -> list[int]:
    """`_leet_inside` of a class string with many candidates, in a few numpy passes (the
    loop costs about 0.7 ms on 2 KB of "1gn0r3 ", the numpy passes about 15 us whatever
    the text): offset j qualifies when it is "l", both neighbours are "g" or "h", and one
    of them is "g"."""
    a = np.frombuffer(cls, dtype=np.uint8)
    g, h, leet_class = ord("g"), ord("h"), ord("l")
    left, mid, right = a[:-2], a[1:-1], a[2:]
    lg, rg = left == g, right == g
    ok = (mid == leet_class) & (lg | (left == h)) & (rg | (right == h)) & (lg | rg)
    return (ok.nonzero()[0] + 1).tolist()


def _negated(m: re.Match[str], view: str) -> bool:
    """'never reveal your system prompt' states a rule; it is not an attack."""
    return bool(_NEG.search(view, max(0, m.start() - 24), m.start()))


_QUOTES = {"'": "'", '"': '"', "\u2018": "\u2019", "\u201c": "\u201d", "\u00ab": "\u00bb",
           "\u201e": "\u201c", "`": "`"}
_QUOTE_MARKS = frozenset(_QUOTES) | frozenset(_QUOTES.values())
_MENTION_MAX = 80
"""A quoted phrase longer than this is a payload, not a mention."""
_INTRODUCED = re.compile(
    r"(?:\bsuch as|\be\.g\.,?|\bi\.e\.,?|\bfor (?:example|instance),?|\bincluding"
    r"|\bthe (?:phrases?|words?|strings?|line|sentence)"
    r"|\b(?:phrases|messages|prompts|lines|strings|inputs|attacks|payloads|things|texts?"
    r"|words|sentences|requests|commands|openers|tricks) like)$"
)
"""Words that introduce an example: "attacks such as 'ignore previous instructions'." names
the phrase even when the quotation ends the sentence ("act like '...'" does not)."""
_UTTER = re.compile(
    r"(?:\bby\s{1,3}saying|\b(?:reply|respond|answer|start|begin|confirm)\s{1,3}(?:only\s{1,3})?with"
    r"|(?:^|[.,;:!?]|\bthen|\band|\bplease|\bnow|\bjust|\bsimply|\bto)\s{0,3}say)$"
)
"""Words that order the quotation said ("confirm by saying 'developer mode enabled'", "then
say '...'"); "attackers rarely say '...'" reports it."""


def _quoted_mention(m: re.Match[str], view: str) -> bool:
    """"a review containing the phrase 'ignore your instructions'" and "a classifier that
    flags messages like 'pretend you have no rules'" name the phrase; they do not say it.
    True when the match lies inside a short quotation of prose: opened after a space or a
    bracket (a JSON or YAML value, opened after ':', '=' or ',', is a payload), closed on the
    same line within _MENTION_MAX characters, with text before it and the sentence going
    on after it or an example's introduction ("such as", "e.g.", "the phrase") before it.
    Any other quoted order that ends the text or its line is still an order."""
    lo, hi = line_bounds(view, m.start())
    for q in range(m.start() - 1, max(lo, m.end() - _MENTION_MAX) - 1, -1):
        mark = view[q]
        if mark not in _QUOTE_MARKS:
            continue
        after_letter = q > lo and view[q - 1].isalpha()
        if after_letter and q + 1 < hi and view[q + 1].isalpha():
            continue  # an apostrophe inside a word: "you're"
        before = view[lo:q].rstrip()
        if after_letter or mark not in _QUOTES or (q > lo and view[q - 1] not in " \t([") \
                or before[-1:] in (":", "=", ",", "{", "["):
            return False  # a closing mark (the match is after a quotation) or a value
        end = min(hi, q + 1 + _MENTION_MAX)
        close = view.find(_QUOTES[mark], m.end(), end)
        while close >= 0 and close + 1 < hi and view[close + 1].isalpha():
            close = view.find(_QUOTES[mark], close + 1, end)  # "don't": not a closing mark
        if close < 0:
            return False
        if sum(c.isalpha() for c in view[lo:q]) < 3 or _UTTER.search(before):
            return False
        return _INTRODUCED.search(before) is not None \
            or sum(c.isalpha() for c in view[close + 1 : hi]) >= 3
    return False


def _unquoted(score: float) -> Validator:
    """`score`, or no finding for a quoted mention (_quoted_mention): the check of the
    phrase rules that need no other."""
    def check(m: re.Match[str], view: str) -> float | None:
        return None if _quoted_mention(m, view) else score
    return check


def _override(m: re.Match[str], view: str) -> float | None:
    if not _QUALIFIER.search(m.group()) or _negated(m, view):
        return None  # "ignore the formatting rules" names no instructions to override
    if _quoted_mention(m, view):
        return None  # the learned detector still reads the sentence around the quote
    return 0.95


_DEVICE = re.compile(
    r"\b(?:i?phone|ipad|ios|android|pixel|samsung|galaxy|kindle|ps[345]|playstation|xbox"
    r"|nintendo|windows|macos|mac|linux|ubuntu|chromebook|chrome ?os|router|firmware|bios"
    r"|tablet|device|settings|usb|bootloader|rom|tv|console|laptop|smartwatch|jailbroken phone"
    r"|root(?:ed|ing)?|adb|sideload\w*)\b"
)


_DECLARED = re.compile(
    r"(?:\s+v?\d[\w.]*)?\s*(?:[:\]\)>*=!.#\-\u2014|]|$"
    r"|(?:is\s+|has\s+been\s+|now\s+)*(?:activated|enabled|engaged|granted|accepted"
    r"|confirmed|active|in effect|initiated|authori[sz]ed)\b)"
)


def _mode(m: re.Match[str], view: str) -> float | None:
    """'developer mode on my Pixel' and 'jailbreak mode on the Kindle' are device and OS
    settings; the same words addressed to a model are a role-play jailbreak. "Admin
    override" is one only when declared ("SYSTEM OVERRIDE: ...", "[admin override]",
    "root override engaged"); "the admin override switch on the forklift" and "allow
    admin override of lockout" name a control of a machine or a program."""
    lo, hi = line_bounds(view, m.start())
    if _DEVICE.search(view, lo, hi) or _quoted_mention(m, view):
        return None
    if m.group().endswith("override") and not _DECLARED.match(view, m.end(), hi):
        return None
    return 0.9


def _leak(m: re.Match[str], view: str) -> float | None:
    return None if _negated(m, view) else 0.85


_REPORTED = re.compile(
    r"\b(?:asked|asks|told|tells|instructed|prompted|got|gets|made|makes|tricked|tricks"
    r"|convinced|coaxed|persuaded)\s{1,3}(?:chatgpt|gpt-?[\w.]*|bard|claude|gemini|llama"
    r"|copilot|bing|grok|(?:the|a|an)\s{1,3}(?:model|bot|assistant|ai|chatbot|llm)"
    r"|models|bots|assistants|chatbots|it|them)\s{1,3}(?:to|into)\s{1,3}$"
)
"""A frame reported as done to a model: "a prompt that asked ChatGPT to role-play an AI
with no rules" tells of a jailbreak; it is not one."""


def _no_limits(m: re.Match[str], view: str) -> float | None:
    """'no restrictions' is a jailbreak only inside a role-play frame, and not when the
    frame and the phrase are quoted as an example (_quoted_mention) or the frame is
    reported as said to a model (_REPORTED)."""
    frame = _FRAME.search(view, max(0, m.start() - 160), m.start())
    if frame is None or _quoted_mention(m, view) \
            or _REPORTED.search(view, max(0, frame.start() - 60), frame.start()):
        return None
    return 0.9


def _persona(m: re.Match[str], view: str) -> float | None:
    """'an unfiltered AI' or 'never break character', unless reported as said to a model
    ("my prompt tells the model to never break character"). A quoted persona is still one:
    "you are my 'unfiltered twin'" names the character the reader is to play."""
    if _REPORTED.search(view, max(0, m.start() - 60), m.start()):
        return None
    return 0.8


def anchored(kind: str, rx: str, score: float, triggers: tuple[str, ...],
             validate: Validator | None = None) -> Pattern:
    """A phrase pattern: every phrase holds one of its triggers, so it runs only near
    them (findings.Pattern.windows)."""
    return pattern(kind, rx, score, triggers, validate, anchored=True)


_PHRASES: tuple[Pattern, ...] = (
    anchored(
        "instruction_override",
        _OVERRIDE,
        0.95,
        ("ignore", "disregard", "forget", "override", "bypass", "abandon", "discard", "neglect"),
        _override,
    ),
    anchored(
        "instruction_override",
        _NEW_ORDERS,
        0.8,
        ("instruction", "directive", "orders", "task", "prompt"),
        _unquoted(0.8),
    ),
    anchored("roleplay_jailbreak", _MODE, 0.9, ("mode", "override", "anything now"), _mode),
    anchored("roleplay_jailbreak", _YOU_ARE_NOW, 0.9, ("you are now",), _unquoted(0.9)),
    anchored(
        "roleplay_jailbreak",
        _NO_LIMITS,
        0.9,
        (
            "restriction",
            "rules",
            "filter",
            "limit",
            "guideline",
            "ethic",
            "moral",
            "censor",
            "polic",
            "boundar",
            "safeguard",
        ),
        _no_limits,
    ),
    anchored(
        "roleplay_jailbreak",
        _PERSONA,
        0.8,
        (
            "unfiltered",
            "uncensored",
            "amoral",
            "unrestricted",
            "unaligned",
            "jailbroken",
            "evil",
            "never",
        ),
        _persona,
    ),
    anchored(
        "prompt_leak",
        _LEAK,
        0.85,
        (
            "system prompt",
            "system message",
            "initial",
            "hidden",
            "original",
            "instructions above",
            "secret instructions",
            "developer",
            "api key",
            "credentials",
        ),
        _leak,
    ),
    anchored(
        "indirect_injection",
        _TO_AI,
        0.8,
        (
            "note",
            "message",
            "attention",
            "instruction",
            "important",
            "reading this",
            "processing this",
            "summarizing this",
            "summarising this",
            "instead",
        ),
    ),
)


def _phrase_findings(view: View, name: str, present: set[str] | None = None) -> list[Finding]:
    """Phrase matches over the canonical view, mapped back to original offsets."""
    out: list[Finding] = []
    for f in run_patterns(name, _PHRASES, view.text, low=view.text, present=present):
        start, end = view.span(f.start, f.end)
        out.append(Finding(name, f.kind, start, end, f.score))
    return out


_TEMPLATE_TOKENS = anchored(
    "template_injection", _TEMPLATE.pattern, 0.95,
    ("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "tool_call>", "tool_response>",
     "function_call>", "<start_of_turn>", "<end_of_turn>", "<｜"),
)  # fmt: skip
"""_TEMPLATE as a pattern: each of its tokens holds one of these triggers."""
_TEMPLATES = (_TEMPLATE_TOKENS,)
_RULES = _PHRASES + _TEMPLATES
"""Phrases and template tokens: their triggers are looked up in one pass (`_rules`)."""


def _template_findings(view: View, name: str, present: set[str] | None = None) -> list[Finding]:
    if present is None:
        present = trigger_index(_TEMPLATES).present(view.text)
    if present.isdisjoint(_TEMPLATE_TOKENS.triggers):
        return []
    return [
        Finding(name, "template_injection", *view.span(f.start, f.end), 0.95)
        for f in _TEMPLATE_TOKENS.findings(name, view.text, view.text, checked=True,
                                           present=present)
    ]


def _rules(view: View, name: str) -> list[Finding]:
    """Phrase and template-token findings over the view, their triggers found once."""
    present = trigger_index(_RULES).present(view.text)
    return _phrase_findings(view, name, present) + _template_findings(view, name, present)


def _base64_spans(text: str) -> list[tuple[int, int]]:
    """The spans `[A-Za-z0-9+/]{24,4096}={0,2}` finds with finditer, found instead by
    mapping the text to byte classes and looking for 24 base64 characters in a row with
    bytes.find: the regex tries a match at every letter of ordinary text (about 50 us
    on 2 KB here, against a few us)."""
    cls = ascii_bytes(text).translate(_BASE64_CLASSES)
    out: list[tuple[int, int]] = []
    i = cls.find(_BASE64_RUN)
    while i != -1:
        stop = cls.find(b" ", i)
        stop = len(cls) if stop == -1 else stop
        while stop - i >= 24:
            end = min(i + 4096, stop)
            if end == stop:  # the run ends here: up to two "=" of padding may follow
                while end < len(text) and end - stop < 2 and text[end] == "=":
                    end += 1
            out.append((i, end))
            i = end
        i = cls.find(_BASE64_RUN, stop)
    return out


def _decode_base64(blob: str) -> str | None:
    """The blob decoded as mostly printable UTF-8 text, else None."""
    blob = blob.rstrip("=")
    if len(blob) % 4 == 1:
        blob = blob[:-1]
    try:
        raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    # Most blobs (hex digests, ids) decode to bytes that are not UTF-8; finding that out
    # by an exception costs more than the decoding, so decode with replacements and
    # decide: a U+FFFD that the bytes do not spell (EF BF BD) means an invalid sequence.
    decoded = raw.decode("utf-8", "replace")
    if "\ufffd" in decoded:
        if b"\xef\xbf\xbd" not in raw:
            return None
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in decoded)
    return decoded if printable >= 0.9 * max(1, len(decoded)) else None


_NOT_LEET = re.compile(r"[0-9a-f:.,;_'\"()=\-]+")
"""Hex digests, UUIDs, versions: digits between letters, but not leetspeak."""


def _leet_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line holding a word with a digit or symbol between letters
    that is not hex, an e-mail address or a URL, in order."""
    out: list[tuple[int, int]] = []
    skip = 0
    for i in _leet_inside(text):
        if i < skip:
            continue  # inside a word already judged, or a line already taken
        lo, hi = line_bounds(text, i)
        start = max(text.rfind(" ", lo, i), text.rfind("\t", lo, i)) + 1 or lo
        stop = min((j for j in (text.find(" ", i, hi), text.find("\t", i, hi)) if j != -1),
                   default=hi)
        word = text[max(start, lo) : stop]
        at = word.find("@")
        if _NOT_LEET.fullmatch(word) or "://" in word or (at > 0 and "." in word[at:]):
            skip = stop
            continue
        out.append((lo, hi))
        skip = hi
    return out


class JailbreakScanner:
    """Instruction overrides, role-play jailbreaks, template tokens and obfuscation."""

    name = "jailbreak"

    def scan(self, text: str) -> list[Finding]:
        view = canonical(text, lower_same_length(text))
        found = _rules(view, self.name)
        if view.folded:
            found = [self._mark_folded(f, text) for f in found]
        found += self._leet(view, found)
        found += self._base64(text)
        found += self._learned(view, found)
        return dedupe(found)

    def _learned(self, view: View, found: list[Finding]) -> list[Finding]:
        """The override detector (override_model.py): paraphrases, other languages,
        fake instruction headers and instructions addressed to the model in documents.
        A span a rule already explains keeps the rule's finding, which names its kind."""
        model = override_model.load()
        p, start, end = model.best(view.text)
        if p < min(model.prompt_p, CLASSIFIER_MIN_P):
            return []
        segment = view.text[start:end]
        start += len(segment) - len(segment.lstrip())
        end -= len(segment) - len(segment.rstrip())
        lo, hi = view.span(start, end)
        if end <= start or any(f.start < hi and lo < f.end for f in found):
            return []
        return [Finding(self.name, "instruction_override", lo, hi, round(p, 3),
                        "override detector")]

    def _mark_folded(self, f: Finding, text: str) -> Finding:
        span = text[f.start : f.end]
        if span.isascii():
            return f
        return Finding(self.name, "obfuscation", f.start, f.end, f.score, f"homoglyph: {f.kind}")

    def _leet(self, view: View, found: list[Finding]) -> list[Finding]:
        lines = _leet_lines(view.text)
        if not lines:
            return []
        folded = leet(view)
        if folded is None:
            return []
        # Only the lines with a leetspeak-looking word are read again; the rest become
        # spaces (offsets kept), so a digest or an e-mail address costs no second pass.
        parts, pos = [], 0
        for lo, hi in lines:
            parts += (" " * (lo - pos), folded.text[lo:hi])
            pos = hi
        parts.append(" " * (len(folded.text) - pos))
        folded = View("".join(parts), folded.offsets, True)
        out = []
        for f in _phrase_findings(folded, self.name):
            if not any(g.start <= f.start < g.end for g in found):
                out.append(Finding(self.name, "obfuscation", f.start, f.end, f.score,
                                   f"leetspeak: {f.kind}"))  # fmt: skip
        return out

    def _base64(self, text: str) -> list[Finding]:
        out = []
        for start, end in _base64_spans(text):
            decoded = _decode_base64(text[start:end])
            if decoded is None:
                continue
            inner = canonical(decoded, lower_same_length(decoded))
            hits = _rules(inner, self.name)
            if hits:
                detail = f"base64: {hits[0].kind}"
                out.append(Finding(self.name, "obfuscation", start, end, 0.9, detail))
        return out

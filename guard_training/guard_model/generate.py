"""Training segments for the override detector, composed from phrases.py, grammar.py and
grammar_more.py (seeded).

A positive is one instruction-override segment (or a header or address followed by its
order, as one span); a negative is a benign segment: the hard negatives of phrases.py,
benign uses of the same verbs ("drop the previous column"), prose, code, logs, tool
output, and the dev split of guard_training/guard_corpus (never its held-out split).
"""

# ruff: noqa: E501  (tables of text: one alternative per line reads best)

from __future__ import annotations

import random

from guard_model import grammar, grammar_more
from guard_model.phrases import EN, LANGS, NEGATIVE

_HOSTS = ("collect-data.io", "files-sync.net", "promo-deals.shop", "audit-log.org",
          "cdn-assets.xyz", "mail-relay.co")
_BENIGN_OBJECTS = (
    "the formatting warnings", "the old build directory", "the previous column", "the typo in the title",
    "the first draft", "the cached results", "the outdated screenshots", "the deprecated flag",
    "the previous version of the report", "the earlier estimate", "the unused imports", "the test data",
    "the duplicate rows", "the default timeout", "the failing lint rule", "the second page",
    "the noise in the first measurement", "last week's schedule", "the sample config", "the old branch",
)
_PROSE = (
    "The deployment finished after three retries.", "Revenue grew 12% compared with last year.",
    "Tests: 214 passed, 3 skipped in 41.2s.", "The river level rose after two days of rain.",
    "Each worker processes one shard of the dataset.", "Shipping takes five to seven business days.",
    "The function returns None when the key is missing.", "Version 2.3 adds streaming responses.",
    "Click Save to keep your changes.", "Latency p99 is tracked on the dashboard.",
    "def parse(line):\n    return line.split(',')", "for i in range(10):\n    total += i",
    '{"status": "ok", "items": 3, "next": null}', "2024-05-01 12:00:03 INFO worker started pid=4411",
    "ERROR connection refused (retrying in 5s)", "SELECT id, name FROM users WHERE active = 1;",
    "| name | value |\n|---|---|\n| rate | 0.3 |", "git commit -m 'fix flaky test'",
    "The recipe needs two eggs, flour and a pinch of salt.", "Our office is closed on public holidays.",
    "Die Lieferung erfolgt in drei Tagen.", "Le musée est ouvert du mardi au dimanche.",
    "El tren sale a las ocho de la mañana.", "Il negozio apre alle nove.", "O relatório está anexado.",
    "De trein vertrekt om acht uur.", "Поезд отправляется в восемь утра.", "报告已经附上。",
)


def _fill(rng: random.Random, text: str) -> str:
    return text.replace("{host}", rng.choice(_HOSTS))


def _style(rng: random.Random, text: str) -> str:
    r = rng.random()
    if r < 0.15:
        text = text.upper()
    elif r < 0.6:
        text = text[:1].upper() + text[1:]
    end = rng.choice((".", ".", "!", "", ":", " now.", "!!"))
    return text + end


def positive(rng: random.Random) -> str:
    """One override segment in a random language and family."""
    lang = LANGS[rng.choice(("en",) * 6 + tuple(LANGS))]
    fam = rng.random()
    order = _fill(rng, rng.choice(lang["order"]))
    if fam < 0.35:
        text = f"{rng.choice(lang['dismiss'])} {rng.choice(lang['object'])}"
        if rng.random() < 0.6:
            text += rng.choice((" and ", ", then ", "; ", ". Instead, ", ". ")) + order
    elif fam < 0.6:
        text = rng.choice(lang["claim"])
        if rng.random() < 0.6:
            text += rng.choice((", so ", ". ", "; ", ". Now ")) + order
    elif fam < 0.8:
        text = f"{rng.choice(lang['address'])}{rng.choice((': ', ', ', ' - ', ' — '))}{order}"
    else:
        gap = rng.choice(("\n", " ", "\n\n"))
        text = f"{rng.choice(lang['header'])}{gap}{order}"
    return _style(rng, text)


_NEAR = (
    ("{ignore} {things} from {source}; {reason}.",
     {"ignore": ("Ignore", "Disregard", "Please ignore", "You can ignore", "Skip"),
      "things": ("any emails", "the alerts", "messages", "the notifications", "calls", "reminders"),
      "source": ("the old helpdesk address", "the staging server", "unknown numbers", "the test account"),
      "reason": ("it was retired last week", "they are test alerts", "we are migrating", "they are spam")}),
    ("The {adj} {doc} {verb} {prev} {what} {when}.",
     {"adj": ("revised", "new", "updated", "2025"), "doc": ("policy", "handbook", "schedule", "contract", "version"),
      "verb": ("replaces", "supersedes", "overrides", "cancels"), "prev": ("all previous", "the earlier", "the old"),
      "what": ("travel guidelines", "rules", "terms", "dates", "instructions"), "when": ("as of March", "from next week", "for all staff")}),
    ("Your {prev} {thing} was {done}{tail}.",
     {"prev": ("previous", "earlier", "last"), "thing": ("booking", "order", "subscription", "request", "appointment"),
      "done": ("cancelled", "replaced", "updated", "revoked"), "tail": (" and the amount refunded", "", " by the system")}),
    ("New instructions for {people}: {action}.",
     {"people": ("volunteers", "staff", "drivers", "students", "guests", "reviewers"),
      "action": ("check in at the blue tent before 8 am", "park behind the building", "submit forms by Friday", "wear your badge")}),
    ("{our} {ai} {can} {benign}, but {human}.",
     {"our": ("Our", "The", "This"), "ai": ("AI assistant", "chatbot", "AI tool", "agent", "language model"),
      "can": ("can", "will", "helps to"), "benign": ("draft replies", "summarise reports", "answer billing questions", "sort tickets"),
      "human": ("a human approves every message", "staff review the output", "you should check the facts")}),
    ("If you are using {tool} to {read} this {doc}, {advice}.",
     {"tool": ("an AI tool", "a screen reader", "the mobile app", "a translation tool", "an assistant"),
      "read": ("read", "summarise", "translate"), "doc": ("report", "page", "document", "email"),
      "advice": ("check the numbers against the appendix", "open the PDF version", "see the glossary", "contact support for help")}),
    ("The attack works by {how} the {who} {that}.",
     {"how": ("convincing", "tricking", "persuading"), "who": ("assistant", "model", "agent"),
      "that": ("that its original rules were revoked", "into ignoring its instructions", "to trust a fake header", "that it is in developer mode")}),
    ("--- BEGIN {what} ---\n{body}",
     {"what": ("PGP SIGNED MESSAGE", "RELEASE NOTES", "CHANGELOG", "CERTIFICATE REQUEST"),
      "body": ("Release 4.2 is available.", "Hash: SHA256", "Fixed a crash on start.", "Version bumped to 1.3.")}),
    ("Never {verb} {what} {where}.",
     {"verb": ("paste", "forward", "share", "send"), "what": ("untrusted e-mails", "passwords", "API keys", "customer data"),
      "where": ("into an agent that can pay", "with anyone", "over chat", "to unknown addresses")}),
)


def near_miss(rng: random.Random) -> str:
    """A benign sentence built like an attack: a person addressed, or an attack described."""
    template, slots = rng.choice(_NEAR)
    return template.format(**{k: rng.choice(v) for k, v in slots.items()})


def negative(rng: random.Random, corpus: list[str]) -> str:
    """One benign segment."""
    r = rng.random()
    if r < 0.12:
        return near_miss(rng)
    if r < 0.35:
        lang = rng.choice(tuple(NEGATIVE))
        return rng.choice(NEGATIVE[lang])
    if r < 0.5:
        verb = rng.choice(EN["dismiss"][:24])
        return _style(rng, f"{verb} {rng.choice(_BENIGN_OBJECTS)}")
    if r < 0.6:
        lang = LANGS[rng.choice(tuple(LANGS))]
        return _style(rng, f"{rng.choice(lang['order']).split(' ')[0]} {rng.choice(_BENIGN_OBJECTS)}")
    if r < 0.8 and corpus:
        text = rng.choice(corpus)
        start = rng.randrange(max(1, len(text) - 200))
        return text[start : start + rng.randint(20, 240)]
    return " ".join(rng.sample(_PROSE, rng.randint(1, 2)))


def dataset(seed: int = 15, n_pos: int = 12000, n_neg: int = 24000,
            corpus: list[str] | None = None, more: bool = False,
            quoted_attacks: bool = False) -> tuple[list[str], list[int]]:
    """(texts, labels) shuffled; a quarter of the items carry a benign neighbour sentence
    (the scanner scores pairs of adjacent segments too). `more` adds grammar_more.py's
    segments (the shipped weights were trained without them); `quoted_attacks` adds hard
    negatives that quote a whole attack inside security writing (for the experimental
    reader, which sees order; not for the linear model)."""
    rng = random.Random(seed)
    items = [(positive(rng), 1) for _ in range(n_pos)]
    items += [(negative(rng, corpus or []), 0) for _ in range(n_neg)]
    items += [(grammar.positive(rng), 1) for _ in range(n_pos)]
    items += [(grammar.negative(rng), 0) for _ in range(n_neg * 2 // 3)]
    if more:
        extra = [grammar_more.positive(rng) for _ in range(n_pos * 3 // 4)]
        items += [(t, 1) for t in extra]
        items += [(grammar_more.negative(rng, rng.choice(extra) if quoted_attacks else None), 0)
                  for _ in range(n_neg // 2)]
    out = []
    for text, label in items:
        if rng.random() < 0.25:
            other = rng.choice(_PROSE)
            text = f"{other} {text}" if rng.random() < 0.5 else f"{text} {other}"
        out.append((text, label))
    rng.shuffle(out)
    return [t for t, _ in out], [y for _, y in out]

"""Realistic surroundings for corpus payloads: tool outputs, web pages, e-mails, code."""

# ruff: noqa: E501  (tables of corpus text: one sample per line reads best)

from __future__ import annotations

import random

_PROSE = (
    "The deployment finished without errors after 3 retries.",
    "Quarterly revenue grew 12% compared with last year.",
    "Tests: 214 passed, 3 skipped in 41.2s.",
    "The meeting has been moved to Thursday afternoon.",
    "Please review the attached design document before Friday.",
    "Our office will be closed on public holidays.",
    "The cache hit rate dropped to 71% during the incident.",
    "Install the package with pip and run the example script.",
    "This tutorial explains how gradient clipping stabilises training.",
    "The river level rose after two days of heavy rain.",
    "Results are sorted by relevance, then by date.",
    "Each worker processes one shard of the dataset.",
    "The recipe needs two eggs, flour and a pinch of salt.",
    "Latency p99 is tracked on the operations dashboard.",
    "Version 2.3 adds support for streaming responses.",
    "Click Save to keep your changes.",
    "The library is licensed under Apache-2.0.",
    "Shipping takes five to seven business days.",
    "Use the search box to filter by project name.",
    "The function returns None when the key is missing.",
)
_NAMES = ("Dana", "Luis", "Priya", "Tomasz", "Aiko", "Sam", "Fatima", "Jonas")


def prose(rng: random.Random, lo: int = 0, hi: int = 2) -> str:
    return " ".join(rng.sample(_PROSE, rng.randint(lo, hi)))


def embed(rng: random.Random, payload: str, kind: str = "any") -> str:
    """Put `payload` inside a randomly chosen, realistic document."""
    style = rng.randrange(6)
    before, after = prose(rng), prose(rng)
    if style == 0:
        return f"{before} {payload} {after}".strip()
    if style == 1:
        return (
            f"<html><body><h1>Docs</h1><p>{before}</p><p>{payload}</p><p>{after}</p></body></html>"
        )
    if style == 2:
        name = rng.choice(_NAMES)
        return f"From: {name} (operations)\nSubject: update\n\nHi,\n{before}\n{payload}\n\nThanks,\n{name}"
    if style == 3:
        return f'{{"status": "ok", "items": 3, "note": "{before}", "text": "{payload}"}}'
    if style == 4:
        return f"# README\n\n{before}\n\n{payload}\n\n{after}"
    return f"$ cat output.txt\n{before}\n{payload}\n{after}\n$"

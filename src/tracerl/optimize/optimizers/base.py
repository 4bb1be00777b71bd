"""What the optimizers share: the Optimizer protocol, teacher-made variants of the
starting texts, and slot choice."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tracerl.optimize import feedback
from tracerl.optimize.history import Evaluation

if TYPE_CHECKING:
    from tracerl.optimize.search import Search


class Optimizer(Protocol):
    name: str

    def run(self, search: Search) -> None:
        """Propose and score prompts until the search stops it (budget, max entries)."""
        ...


def variant_pool(search: Search, variants: int) -> dict[str, list[str]]:
    """For each optimized slot: its starting text, then up to `variants` teacher
    paraphrases (unusable replies are skipped entries)."""
    pools: dict[str, list[str]] = {}
    for slot in search.settings.slots:
        texts = [search.start.slot(slot)]
        for _ in range(variants):
            new = search.propose(search.start, slot, feedback.paraphrase(texts[0]),
                                 "variant", (0,))
            if new is not None and new.slot(slot) not in texts:
                texts.append(new.slot(slot))
        pools[slot] = texts
    return pools


def pick_slot(search: Search, turn: int) -> str:
    """Slots are edited in turn (GEPA's round robin; the others use it too)."""
    slots = search.settings.slots
    return slots[turn % len(slots)]


def scored(entry: Evaluation) -> float:
    """An entry's score for comparisons (unjudged counts as the worst)."""
    return entry.score if entry.score is not None else float("-inf")

"""The `search` config section: what every optimizer shares (no torch here)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tracerl.optimize.prompt import TEXT_SLOTS


@dataclass(frozen=True)
class SearchSettings:
    """The `search` section. How many rollouts per task and at which temperature a
    candidate is scored are the `rollout` section's group_size and temperature."""

    minibatch: int = 4
    """Tasks in a minibatch (ProTeGi's bandit pulls, GEPA's proposal checks)."""
    max_evaluations: int = 0
    """Stop after this many history entries (0 = only the budget stops the search)."""
    slots: list[str] = field(default_factory=lambda: ["instruction"])
    """Text slots the optimizers may rewrite: system, prefix, instruction."""
    max_examples: int = 2
    """Few-shot examples a prompt may hold at most."""
    feedback_examples: int = 3
    """Rollouts shown to the teacher per request."""

    def __post_init__(self) -> None:
        if not self.slots:
            raise ValueError("search.slots must name at least one slot")
        for slot in self.slots:
            if slot not in TEXT_SLOTS:
                raise ValueError(f"search.slots: unknown slot {slot!r}; slots: {TEXT_SLOTS}")
        if self.minibatch < 1 or self.max_examples < 0 or self.feedback_examples < 1:
            raise ValueError("search.minibatch and search.feedback_examples must be >= 1, "
                             "search.max_examples >= 0")

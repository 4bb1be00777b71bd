"""Random Search: random instruction variants and random few-shot selections.

The baseline every prompt optimizer should beat (Bergstra and Bengio, "Random Search
for Hyper-Parameter Optimization", JMLR 2012, applied as DSPy's
BootstrapFewShotWithRandomSearch and agent-opt's random search apply it to prompts):
each candidate draws, independently and uniformly, one text per optimized slot from a
pool and a random subset of the few-shot pool, and is scored on every search task.

Departures: the text pool is made once, up front (the starting text and `variants`
teacher paraphrases of it), so every candidate costs only its rollouts; DSPy bootstraps
its demonstrations from the program's own successful runs, while ours are the task
family's oracle demonstrations (tracerl.optimize.data).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracerl.optimize.optimizers.base import variant_pool

if TYPE_CHECKING:
    from tracerl.optimize.search import Search


@dataclass(frozen=True)
class RandomSearch:
    variants: int = 3
    """Teacher paraphrases of each optimized slot's starting text in the pool."""
    name: str = "random_search"

    def run(self, search: Search) -> None:
        pools = variant_pool(search, self.variants)
        pool_ids = sorted(search.data.examples)
        while True:
            prompt = search.start
            for slot, texts in pools.items():
                prompt = prompt.with_slot(slot, search.rng.choice(texts))
            k = search.rng.randint(0, min(search.settings.max_examples, len(pool_ids)))
            prompt = prompt.with_examples(search.rng.sample(pool_ids, k))
            search.score(prompt, operation="sample", parents=(0,))

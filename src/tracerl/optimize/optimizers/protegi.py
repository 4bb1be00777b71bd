"""ProTeGi: textual gradients, edits along them, beam search with bandit selection.

Pryzant et al., "Automatic Prompt Optimization with 'Gradient Descent' and Beam
Search" (EMNLP 2023). Each round, for every prompt in the beam: score it on a minibatch,
show the teacher the failures and ask why the prompt caused them (the textual
"gradient"), then ask for edits of the prompt that fix each gradient (the step against
the gradient). The beam's prompts and their edits are the arms of a best-arm bandit:
UCB pulls (a fresh minibatch each) spread the scoring over the promising arms, and the
`beam_width` arms with the best mean survive into the next round, after a full scoring.

Departures: selection is UCB1 with a fixed number of pulls per round (the paper also
studies successive rejects and UCB-E); the paper's Monte Carlo paraphrases of each
edit are left out (they cost teacher calls that the small budgets here need for
gradients); one slot is edited per round, in turn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracerl.optimize import feedback
from tracerl.optimize.history import Evaluation
from tracerl.optimize.optimizers.base import pick_slot
from tracerl.optimize.prompt import Prompt

if TYPE_CHECKING:
    from tracerl.optimize.search import Search


@dataclass(frozen=True)
class ProTeGi:
    beam_width: int = 2
    """Prompts kept per round."""
    gradients: int = 2
    """Textual gradients asked per beam member per round."""
    edits: int = 1
    """Edits asked per gradient."""
    pulls: int = 6
    """Bandit pulls (minibatch scorings) per round."""
    exploration: float = 1.0
    """UCB exploration constant c in mean + c * sqrt(ln N / n)."""
    name: str = "protegi"

    def run(self, search: Search) -> None:
        beam: list[Evaluation] = [search.history[0]]
        for round_ in range(10**9):
            slot = pick_slot(search, round_)
            arms = [(e.prompt, e.index) for e in beam]
            for parent in beam:
                arms += self._expand(search, parent, slot)
            beam = self._select(search, arms)

    def _expand(self, search: Search, parent: Evaluation, slot: str) -> list[tuple[Prompt, int]]:
        batch = search.score(parent.prompt, search.minibatch(), operation="minibatch",
                             parents=(parent.index,))
        failed = feedback.failures(batch.trajectories, search.settings.feedback_examples)
        if not failed:
            return []
        text = parent.prompt.slot(slot)
        out = []
        for _ in range(self.gradients):
            gradient = search.ask(feedback.textual_gradient(text, failed))
            for _ in range(self.edits):
                new = search.propose(parent.prompt, slot, feedback.apply_gradient(text, gradient),
                                     "edit", (parent.index,))
                if new is not None:
                    out.append((new, parent.index))
        return out

    def _select(self, search: Search, arms: list[tuple[Prompt, int]]) -> list[Evaluation]:
        """UCB1 over the arms with minibatch pulls; the best `beam_width` means, scored
        on every search task."""
        unique = list({p.key(): (p, parent) for p, parent in arms}.values())
        totals = [0.0] * len(unique)
        counts = [0] * len(unique)
        for n in range(1, self.pulls + 1):
            if n <= len(unique):
                i = n - 1
            else:
                i = max(range(len(unique)), key=lambda j: totals[j] / counts[j] + self.exploration
                        * math.sqrt(math.log(n) / counts[j]) if counts[j] else float("inf"))
            prompt, parent = unique[i]
            pulled = search.score(prompt, search.minibatch(), operation="pull", parents=(parent,))
            totals[i] += pulled.score or 0.0
            counts[i] += 1
        ranked = sorted(range(len(unique)),  # unpulled arms last
                        key=lambda j: -(totals[j] / counts[j]) if counts[j] else 1.0)
        return [search.score(unique[j][0], operation="beam", parents=(unique[j][1],))
                for j in ranked[: self.beam_width]]

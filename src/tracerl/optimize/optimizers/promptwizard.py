"""PromptWizard: mutate, critique and refine the instruction, then select examples.

Agarwal et al., "PromptWizard: Task-Aware Prompt Optimization Framework" (Microsoft,
2024). Each round: the teacher mutates the best instruction under several thinking
styles, the mutations are scored on a minibatch and the best is kept; the teacher
critiques it on the rollouts it failed and refines it from the critique. Then the
few-shot block is chosen: candidate examples are tried one at a time on a minibatch
and kept greedily while they raise its score.
Every round ends with a full scoring of the result.

Departures: the paper synthesizes examples with the LLM and adds chain-of-thought
reasoning to them; for tool-using agents a teacher-written tool trace would be
unchecked, so our examples are synthesized by the task family's oracle (correct
demonstrations on freshly drawn train tasks, tracerl.optimize.data) and selection
picks among them; the thinking styles are our own short list; one slot per round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracerl.optimize import feedback
from tracerl.optimize.history import Evaluation
from tracerl.optimize.optimizers.base import pick_slot, scored

if TYPE_CHECKING:
    from tracerl.optimize.search import Search

THINKING_STYLES = (
    "Break the problem into steps and say which step comes first.",
    "Say exactly what the final answer must look like.",
    "Name the tools to use and when to use them.",
    "Think about the most common mistake and forbid it.",
    "Make the instruction shorter and more direct.",
    "Describe the task the way an expert would explain it to a beginner.",
)


@dataclass(frozen=True)
class PromptWizard:
    mutations: int = 3
    """Thinking-style mutations per round."""
    example_trials: int = 3
    """Pool examples tried per round for the few-shot block."""
    name: str = "promptwizard"

    def run(self, search: Search) -> None:
        best = search.history[0]
        for round_ in range(10**9):
            slot = pick_slot(search, round_)
            batch = search.minibatch()
            top = self._mutate(search, best, slot, batch)
            top = self._critique_refine(search, top, slot, batch)
            top = self._examples(search, top, batch)
            full = search.score(top.prompt, operation="round", parents=(top.index,))
            if scored(full) >= scored(best):
                best = full

    def _mutate(self, search: Search, parent: Evaluation, slot: str,
                batch: tuple) -> Evaluation:
        top = search.score(parent.prompt, batch, operation="minibatch", parents=(parent.index,))
        text = parent.prompt.slot(slot)
        styles = search.rng.sample(THINKING_STYLES, min(self.mutations, len(THINKING_STYLES)))
        for style in styles:
            new = search.propose(parent.prompt, slot, feedback.mutate(text, style), "mutate",
                                 (parent.index,))
            if new is not None:
                entry = search.score(new, batch, operation="mutate", parents=(parent.index,))
                if scored(entry) > scored(top):
                    top = entry
        return top

    def _critique_refine(self, search: Search, top: Evaluation, slot: str,
                         batch: tuple) -> Evaluation:
        failed = feedback.failures(top.trajectories, search.settings.feedback_examples)
        if not failed:
            return top
        text = top.prompt.slot(slot)
        critique = search.ask(feedback.critique(text, failed))
        new = search.propose(top.prompt, slot, feedback.refine(text, critique), "refine",
                             (top.index,))
        if new is None:
            return top
        entry = search.score(new, batch, operation="refine", parents=(top.index,))
        return entry if scored(entry) > scored(top) else top

    def _examples(self, search: Search, top: Evaluation, batch: tuple) -> Evaluation:
        """Greedy forward selection of few-shot examples on the minibatch."""
        pool = [e for e in sorted(search.data.examples) if e not in top.prompt.examples]
        if not pool or len(top.prompt.examples) >= search.settings.max_examples:
            return top
        for ex in search.rng.sample(pool, min(self.example_trials, len(pool))):
            if len(top.prompt.examples) >= search.settings.max_examples:
                break
            prompt = top.prompt.with_examples([*top.prompt.examples, ex])
            entry = search.score(prompt, batch, operation="example", parents=(top.index,))
            if scored(entry) > scored(top):
                top = entry
        return top

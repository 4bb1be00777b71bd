"""Meta-Prompt: a teacher model rewrites the prompt from the failures it is shown.

The meta-prompting loop of OPRO (Yang et al., "Large Language Models as Optimizers",
ICLR 2024) and of agent-opt's meta-prompt optimizer: the teacher reads a meta-prompt
holding the best prompts so far with their scores and the rollouts the current prompt
failed, and writes a new prompt; the new prompt is scored on every search task and
becomes the current one when it scores at least as well.

Departures: OPRO shows up to 20 scored prompts and samples 8 proposals per step; a
135M or small served teacher has a short context, so `history_shown` scored texts and
one proposal per step; the failures shown are the current prompt's own rollouts (OPRO
shows fixed exemplars). One slot is rewritten per step, in turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracerl.optimize import feedback
from tracerl.optimize.optimizers.base import pick_slot, scored

if TYPE_CHECKING:
    from tracerl.optimize.search import Search


@dataclass(frozen=True)
class MetaPrompt:
    history_shown: int = 4
    """Best earlier texts (with scores) shown in the meta-prompt."""
    name: str = "metaprompt"

    def run(self, search: Search) -> None:
        current = search.history[0]
        for step in range(10**9):
            slot = pick_slot(search, step)
            full = sorted((e for e in search.history if e.full and e.score is not None),
                          key=lambda e: e.score or 0.0)
            shown = [(e.prompt.slot(slot), e.score or 0.0) for e in full[-self.history_shown:]]
            failed = feedback.failures(current.trajectories, search.settings.feedback_examples)
            text = current.prompt.slot(slot)
            new = search.propose(current.prompt, slot,
                                 feedback.meta_rewrite(text, shown, failed), "rewrite",
                                 (current.index,))
            if new is None:
                continue
            entry = search.score(new, operation="rewrite", parents=(current.index,))
            if scored(entry) >= scored(current):
                current = entry

"""GEPA: reflective mutation from full traces, a Pareto front over per-task scores,
and merges of front members.

Agrawal et al., "GEPA: Reflective Prompt Evolution Can Outperform Reinforcement
Learning" (2025). The candidate pool starts with the starting prompt, scored on every
search task (the Pareto set). Each iteration either

- mutates: picks a candidate from the Pareto front (a candidate is on it when it has
  the best score on at least one task; the pick is weighted by how many tasks it leads),
  rolls it out on a minibatch and shows the teacher the full traces (every turn, tool
  call, tool result, expected answer and score), and asks for a new text of one slot
  (slots in turn). The child is scored on the same minibatch and, only if it beats its
  parent there, on the whole Pareto set and added to the pool; or
- merges (with probability `merge_prob`, once the front holds two candidates that
  descend from a common ancestor): for each slot the child takes the text that changed
  from the ancestor (from the better parent when both changed), and the few-shot block
  of the better parent.

Departures: the paper's merge also checks that a merge was not tried before and
subsamples its evaluation; ours scores a merge on the full set directly (the sets are
small) and relies on the search memo to never score a merged prompt twice. The
feedback text is our trace rendering plus the objective's score (GEPA lets each
metric return its own feedback text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tracerl.optimize import feedback
from tracerl.optimize.history import Evaluation
from tracerl.optimize.optimizers.base import pick_slot, scored
from tracerl.optimize.prompt import TEXT_SLOTS, Prompt

if TYPE_CHECKING:
    from tracerl.optimize.search import Search


def pareto_front(pool: Sequence[Evaluation]) -> dict[int, int]:
    """Candidate index (into `pool`) -> number of tasks on which it has the best score;
    only candidates that lead on at least one task appear."""
    wins: dict[int, int] = {}
    tasks = {t for e in pool for t in e.task_scores}
    for task in sorted(tasks):
        values = [(e.task_scores.get(task), i) for i, e in enumerate(pool)]
        top = max((v for v, _ in values if v is not None), default=None)
        if top is None:
            continue
        for v, i in values:
            if v == top:
                wins[i] = wins.get(i, 0) + 1
    return wins


def ancestors(history: Sequence[Evaluation], index: int) -> list[int]:
    """`index` and every entry it descends from, nearest first."""
    out, todo = [], [index]
    while todo:
        i = todo.pop(0)
        if i not in out:
            out.append(i)
            todo.extend(history[i].parents)
    return out


def merge(ancestor: Prompt, a: Prompt, b: Prompt, a_better: bool) -> Prompt:
    """Per slot: the text that changed from the ancestor (the better parent's when
    both changed); the better parent's few-shot block."""
    better, worse = (a, b) if a_better else (b, a)
    merged = better
    for slot in TEXT_SLOTS:
        if better.slot(slot) == ancestor.slot(slot) and worse.slot(slot) != ancestor.slot(slot):
            merged = merged.with_slot(slot, worse.slot(slot))
    return merged


@dataclass(frozen=True)
class GEPA:
    merge_prob: float = 0.2
    """Chance that an iteration merges two front members instead of mutating."""
    name: str = "gepa"

    def run(self, search: Search) -> None:
        pool: list[Evaluation] = [search.history[0]]
        for step in range(10**9):
            if search.rng.random() < self.merge_prob and self._merge(search, pool):
                continue
            self._mutate(search, pool, pick_slot(search, step))

    def _select(self, search: Search, pool: list[Evaluation]) -> Evaluation:
        front = pareto_front(pool)
        if not front:
            return pool[0]
        members = sorted(front)
        return pool[search.rng.choices(members, weights=[front[i] for i in members])[0]]

    def _mutate(self, search: Search, pool: list[Evaluation], slot: str) -> None:
        parent = self._select(search, pool)
        batch = search.minibatch()
        before = search.score(parent.prompt, batch, operation="minibatch",
                              parents=(parent.index,))
        traces = "\n\n".join(feedback.trace_text(t) for t in
                             before.trajectories[: search.settings.feedback_examples])
        new = search.propose(parent.prompt, slot,
                             feedback.reflect(slot, parent.prompt.slot(slot), traces),
                             "reflect", (parent.index,))
        if new is None:
            return
        after = search.score(new, batch, operation="reflect", parents=(parent.index,))
        if scored(after) > scored(before):
            pool.append(search.score(new, operation="accept", parents=(parent.index,)))

    def _merge(self, search: Search, pool: list[Evaluation]) -> bool:
        front = sorted(pareto_front(pool))
        if len(front) < 2:
            return False
        i, j = search.rng.sample(front, 2)
        a, b = pool[i], pool[j]
        common = [k for k in ancestors(search.history, a.index)
                  if k in ancestors(search.history, b.index)]
        if not common:
            return False
        child = merge(search.history[common[0]].prompt, a.prompt, b.prompt,
                      scored(a) >= scored(b))
        if child in (a.prompt, b.prompt):
            return False
        pool.append(search.score(child, operation="merge", parents=(a.index, b.index)))
        return True

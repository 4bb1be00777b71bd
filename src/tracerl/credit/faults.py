"""Deliberately wrong step evaluators: what calibration must catch.

Turn-level credit is only as good as its evaluator, and a wrong evaluator teaches the
wrong lesson faster than no evaluator at all. These wrappers break a good evaluator in
the two ways that matter in practice, so a user (and benchmarks/credit.py) can check
that calibration notices:

- `InvertedEvaluator`: anti-correlated everywhere (score -> 1 - score), the evaluator
  whose sign convention was flipped.
- `HardInvertedEvaluator`: right on easy states, inverted on hard ones (a `hard`
  predicate names them), the judge that does well on the cases it was tested on and
  badly where the task is actually difficult. Globally it can still correlate with
  the truth, which is what makes it the harder one to catch.

`credit.fault=inverted|hard_inverted` applies one to the configured evaluator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tracerl.credit.evaluators import StepEvaluator
from tracerl.types import Trajectory

HardCheck = Callable[[Trajectory, int], bool]


@dataclass(frozen=True)
class InvertedEvaluator:
    """1 - the inner evaluator's score (abstentions stay abstentions)."""

    inner: StepEvaluator

    @property
    def name(self) -> str:
        return f"inverted({self.inner.name})"

    def __call__(self, trajectory: Trajectory, turn_index: int) -> float | None:
        score = self.inner(trajectory, turn_index)
        return None if score is None else 1.0 - score


@dataclass(frozen=True)
class HardInvertedEvaluator:
    """The inner score on easy states, 1 - the score where `hard(trajectory, turn)`."""

    inner: StepEvaluator
    hard: HardCheck

    @property
    def name(self) -> str:
        return f"hard_inverted({self.inner.name})"

    def __call__(self, trajectory: Trajectory, turn_index: int) -> float | None:
        score = self.inner(trajectory, turn_index)
        if score is None or not self.hard(trajectory, turn_index):
            return score
        return 1.0 - score

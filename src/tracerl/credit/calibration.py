"""Should this step evaluator be trusted? Measure it against Monte Carlo outcomes.

On states sampled from the current rollouts, compare the evaluator's scores with
Monte Carlo turn advantages (branching rollouts, `MonteCarloEvaluator`):
- Spearman rank correlation (ties get average ranks; 0 when either side is constant),
- accuracy: the fraction of states where "the evaluator says the turn helped"
  (score > 0.5) agrees with "the branches say it helped" (advantage > 0), counted over
  states whose Monte Carlo advantage is not exactly 0 (a tie says nothing).
Below `min_spearman` the evaluator is not trusted: a warning is logged and training
falls back to trajectory-level credit (the turn term is switched off), because a
wrong per-step signal is worse than none (it biases every update).
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

import torch

from tracerl.credit.evaluators import StepEvaluator
from tracerl.credit.montecarlo import MonteCarloEvaluator
from tracerl.types import Trajectory

log = logging.getLogger(__name__)


def _ranks(x: torch.Tensor) -> torch.Tensor:
    """Average ranks (1-based), ties sharing the mean of their positions."""
    order = torch.argsort(x, stable=True)
    ranks = torch.empty_like(x)
    ranks[order] = torch.arange(1, len(x) + 1, dtype=x.dtype)
    for value in x.unique():
        tied = x == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation: Pearson correlation of the average ranks."""
    if len(x) != len(y):
        raise ValueError(f"spearman needs equal lengths, got {len(x)} and {len(y)}")
    if len(x) < 2:
        return 0.0
    rx = _ranks(torch.tensor(x, dtype=torch.float64))
    ry = _ranks(torch.tensor(y, dtype=torch.float64))
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denom = (rx.pow(2).sum() * ry.pow(2).sum()).sqrt()
    return float((rx * ry).sum() / denom) if denom > 0 else 0.0


def sign_accuracy(scores: list[float], advantages: list[float]) -> float:
    """Agreement of score > 0.5 with advantage > 0, over states with advantage != 0."""
    pairs = [(s > 0.5, a > 0) for s, a in zip(scores, advantages, strict=True) if a != 0]
    return sum(p == q for p, q in pairs) / len(pairs) if pairs else float("nan")


@dataclass(frozen=True)
class CalibrationReport:
    evaluator: str
    spearman: float
    accuracy: float
    states: int
    """States where both the evaluator and the branches gave a value."""
    trusted: bool
    """spearman >= the threshold: use turn-level credit; else fall back."""


def sample_states(trajectories: list[Trajectory], n: int, rng: random.Random,
                  evaluator: StepEvaluator | None = None) -> list[tuple[Trajectory, int]]:
    """Up to `n` distinct (trajectory, turn) states.

    With `evaluator`, the states are balanced between its two verdicts (score > 0.5 or
    not), drawn from a pool of 4n random candidates: a good policy rarely makes the
    bad moves an evaluator must recognise, and uniform sampling would then measure
    the evaluator on a constant (Spearman 0) instead of on its discrimination.
    """
    pool = [(t, k) for t in trajectories for k in range(len(t.turns))]
    if evaluator is None:
        return rng.sample(pool, min(n, len(pool)))
    candidates = rng.sample(pool, min(4 * n, len(pool)))
    scored = [(s, state) for state in candidates
              if (s := evaluator(*state)) is not None]
    good = [state for s, state in scored if s > 0.5]
    bad = [state for s, state in scored if s <= 0.5]
    take_bad = min(len(bad), max(n // 2, n - len(good)))
    return bad[:take_bad] + good[: n - take_bad]


def calibrate(evaluator: StepEvaluator, reference: MonteCarloEvaluator,
              states: list[tuple[Trajectory, int]], min_spearman: float) -> CalibrationReport:
    """Score `states` with both; trusted iff Spearman >= min_spearman (warn otherwise)."""
    advantages = reference.advantages(states)
    scores, truth = [], []
    for (traj, k), adv in zip(states, advantages, strict=True):
        score = evaluator(traj, k)
        if score is not None and adv is not None:
            scores.append(score)
            truth.append(adv)
    rho = spearman(scores, truth)
    report = CalibrationReport(evaluator.name, rho, sign_accuracy(scores, truth), len(scores),
                               trusted=len(scores) >= 2 and rho >= min_spearman)
    if not report.trusted:
        log.warning("step evaluator %s is not trusted (Spearman %.3f < %.3f on %d states, "
                    "accuracy %.3f): falling back to trajectory-level credit", evaluator.name,
                    rho, min_spearman, len(scores), report.accuracy)
    return report

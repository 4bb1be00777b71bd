"""Composing rewards: weighted sums, gates, per-turn rewards, and a format check.

Every composite is itself a Reward (`(trajectory) -> float | None` with a `name`).
None propagates: if a part that counts could not be judged, neither can the whole,
because guessing 0 would feed an infrastructure failure into the gradient.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tracerl.rewards.base import Reward, RewardResult
from tracerl.types import Trajectory

TurnScorer = Callable[[Trajectory, int], float | None]
Aggregate = Literal["mean", "sum", "min", "last"]


@dataclass
class FunctionReward:
    """Wrap a plain function of a Trajectory as a named Reward."""

    fn: Callable[[Trajectory], float | RewardResult | None]
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.name or getattr(self.fn, "__name__", "reward")

    def __call__(self, trajectory: Trajectory) -> float | None:
        out = self.fn(trajectory)
        return out.score if isinstance(out, RewardResult) else out


def as_reward(reward: Callable[[Trajectory], float | RewardResult | None]) -> Reward:
    """A Reward as it is, or a plain function of a Trajectory wrapped and named after it."""
    if isinstance(getattr(reward, "name", None), str):
        return reward  # type: ignore[return-value]
    return FunctionReward(reward)


@dataclass
class WeightedSum:
    """sum_i w_i * r_i; None when any part with a non-zero weight returns None."""

    parts: Sequence[tuple[Reward, float]]
    name: str = "weighted_sum"

    def __post_init__(self) -> None:
        if not self.parts:
            raise ValueError("WeightedSum.parts must name at least one (reward, weight)")

    def part_scores(self, trajectory: Trajectory) -> dict[str, float | None]:
        """Each part's own score, keyed by reward name (for Trajectory.reward_parts)."""
        return {reward.name: reward(trajectory) for reward, _ in self.parts}

    def __call__(self, trajectory: Trajectory) -> float | None:
        total = 0.0
        scores = [reward(trajectory) for reward, _ in self.parts]
        for (_, weight), score in zip(self.parts, scores, strict=True):
            if weight == 0:
                continue
            if score is None:
                return None
            total += weight * score
        return total


@dataclass
class Gate:
    """`then` counts only when `gate` scores at least `threshold`, else `otherwise`.

    The usual use: format must pass before correctness is paid, so a policy cannot
    collect correctness reward from an answer the parser only found by luck.
    """

    gate: Reward
    then: Reward
    threshold: float = 1.0
    otherwise: float = 0.0
    name: str = "gate"

    def __call__(self, trajectory: Trajectory) -> float | None:
        opened = self.gate(trajectory)
        if opened is None:
            return None
        if opened < self.threshold:
            return self.otherwise
        return self.then(trajectory)


@dataclass
class PerTurn:
    """Score every turn with `scorer(trajectory, turn_index)` and aggregate.

    `turn_scores` gives the per-turn values (for turn-level credit); calling the
    reward gives their aggregate as the outcome reward.
    """

    scorer: TurnScorer
    aggregate: Aggregate = "mean"
    name: str = "per_turn"

    def turn_scores(self, trajectory: Trajectory) -> list[float | None]:
        return [self.scorer(trajectory, i) for i in range(len(trajectory.turns))]

    def __call__(self, trajectory: Trajectory) -> float | None:
        scores = self.turn_scores(trajectory)
        if not scores:
            return 0.0
        if any(s is None for s in scores):
            return None
        values = [float(s) for s in scores if s is not None]
        if self.aggregate == "mean":
            return sum(values) / len(values)
        if self.aggregate == "sum":
            return sum(values)
        if self.aggregate == "min":
            return min(values)
        if self.aggregate == "last":
            return values[-1]
        raise ValueError(
            f"PerTurn.aggregate must be mean, sum, min or last, not {self.aggregate!r}"
        )


_NO_THINK_TAG = r"(?s:(?!</?think>).)"
_NO_ANSWER_TAG = r"(?s:(?!</?answer>).)"
THINK_ANSWER = (
    rf"\s*<think>{_NO_THINK_TAG}+?</think>\s*"
    rf"<answer>{_NO_ANSWER_TAG}*?\S{_NO_ANSWER_TAG}*?</answer>\s*"
)


@dataclass
class FormatReward:
    """1.0 when the final turn matches `pattern` in full, else 0.0.

    The default demands exactly one non-empty <think> block followed by exactly one
    non-empty <answer> block, and nothing else: duplicated, nested or empty tags fail.
    """

    pattern: str = THINK_ANSWER
    name: str = "format"
    _regex: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._regex = re.compile(self.pattern)

    def __call__(self, trajectory: Trajectory) -> float | None:
        return 1.0 if self._regex.fullmatch(trajectory.final_text) else 0.0

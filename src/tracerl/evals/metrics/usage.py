"""Cost measurements (latency, tokens) and task completion through a Reward.

Latency and token counts are measurements, not scores in [0, 1]: lower is better, and
`evaluate()` reports their mean like any other metric.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult
from tracerl.rewards.base import Reward

TOKEN_KINDS = ("prompt", "completion", "total")


@dataclass(frozen=True)
class Latency:
    """Seconds from the first turn's start to the last turn's end (recorded wall clock);
    for conversations without timestamps, the reference field "latency_s"; else None.

    >>> from tracerl.evals.items import item_from_text
    >>> Latency()(item_from_text("hi", latency_s=0.25))
    0.25
    """

    name: str = "latency_s"

    def __call__(self, item: EvalItem) -> float | None:
        turns = item.trajectory.turns
        if turns and turns[0].started_at > 0 and turns[-1].ended_at > 0:
            return turns[-1].ended_at - turns[0].started_at
        value = item.reference.get("latency_s")
        return None if value is None else float(value)


@dataclass(frozen=True)
class TokenCount:
    """Tokens of one kind: "prompt" (prompt ids), "completion" (sampled action ids),
    "total" (all ids). Conversations without ids use a reference "usage" object in
    OpenAI form ({"prompt_tokens", "completion_tokens", "total_tokens"}); else None.

    >>> from tracerl.evals.items import item_from_text
    >>> TokenCount("prompt")(item_from_text("hi", usage={"prompt_tokens": 12}))
    12.0
    """

    kind: str = "completion"
    name: str = "tokens"

    def __post_init__(self) -> None:
        if self.kind not in TOKEN_KINDS:
            raise ValueError(f"TokenCount.kind must be one of {TOKEN_KINDS}, got {self.kind!r}")

    def __call__(self, item: EvalItem) -> float | None:
        traj = item.trajectory
        if traj.prompt_ids or traj.num_action_tokens:
            counts = {"prompt": len(traj.prompt_ids), "completion": traj.num_action_tokens,
                      "total": len(traj.token_ids())}
            return float(counts[self.kind])
        usage = item.reference.get("usage")
        if isinstance(usage, dict) and usage.get(f"{self.kind}_tokens") is not None:
            return float(usage[f"{self.kind}_tokens"])
        return None


@dataclass(frozen=True)
class TaskCompletion:
    """Did the agent complete the task, as a verifiable Reward judges it?
    The reward's None (could not judge) stays None."""

    reward: Reward
    threshold: float = 1.0
    name: str = "task_completion"

    def __call__(self, item: EvalItem) -> MetricResult:
        value = self.reward(item.trajectory)
        if value is None:
            return MetricResult(None, details={"reward": self.reward.name})
        return MetricResult(float(value), passed=float(value) >= self.threshold,
                            details={"reward": self.reward.name})

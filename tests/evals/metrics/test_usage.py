"""Latency, token counts, task completion, and Metric -> Reward adapters."""

from __future__ import annotations

from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricReward, as_reward
from tracerl.evals.metrics import Contains, Latency, TaskCompletion, TokenCount
from tracerl.rewards.base import Reward
from tracerl.types import Trajectory


def test_latency_from_turn_timestamps(make_trajectory):
    traj = make_trajectory(("a", []), ("b", []))
    traj.turns[0].started_at, traj.turns[1].ended_at = 100.0, 102.5
    assert Latency()(EvalItem("x", traj)) == 2.5


def test_latency_from_reference_field_or_none(item):
    assert Latency()(item("a", latency_s=0.7)) == 0.7
    assert Latency()(item("a")) is None


def test_token_counts_from_ids(make_trajectory):
    it = EvalItem("x", make_trajectory(("a", []), ("b", [])))
    assert [TokenCount(k)(it) for k in ("prompt", "completion", "total")] == [2.0, 6.0, 8.0]


def test_token_counts_from_usage_when_no_ids(item):
    it = item("a", usage={"prompt_tokens": 5, "completion_tokens": 3})
    it.trajectory.prompt_ids.clear()
    it.trajectory.turns[0].action_ids.clear()
    it.trajectory.turns[0].action_logprobs.clear()
    assert TokenCount("prompt")(it) == 5.0


class AnswerIs42:
    name = "answer_is_42"

    def __call__(self, trajectory: Trajectory) -> float | None:
        if not trajectory.turns:
            return None
        return 1.0 if "42" in trajectory.final_text else 0.0


def test_task_completion_uses_the_reward(item):
    assert TaskCompletion(AnswerIs42())(item("it is 42")).passed
    assert TaskCompletion(AnswerIs42())(item("it is 41")).score == 0.0


def test_metric_as_outcome_reward(make_trajectory):
    reward = as_reward(Contains())
    assert isinstance(reward, Reward) and reward.name == "contains"
    assert reward(make_trajectory(("so, Paris", []), answer="paris")) == 1.0


def test_metric_as_per_turn_reward(make_trajectory):
    traj = make_trajectory(("thinking", []), ("Paris", []), ("bye", []), answer="paris")
    assert as_reward(Contains()).per_turn(traj) == [0.0, 1.0, 0.0]


class Raising:
    name = "raising"

    def __call__(self, item: EvalItem) -> float:
        raise RuntimeError("bug in the metric")


def test_failing_metric_reward_is_none_and_counted(make_trajectory):
    reward = MetricReward(Raising())
    assert reward(make_trajectory(("x", []))) is None and reward.failures == 1


def test_unjudged_item_reward_is_none_and_counted_apart(make_trajectory):
    reward = MetricReward(Contains(reference_key="missing"))
    assert reward(make_trajectory(("x", []))) is None
    assert (reward.unjudged, reward.failures) == (1, 0)

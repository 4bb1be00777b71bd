"""Composition: weighted sums, gates, per-turn rewards, format checks."""

from __future__ import annotations

import pytest

from tracerl.rewards import FormatReward, FunctionReward, Gate, PerTurn, WeightedSum
from tracerl.types import Task, Trajectory, Turn


def traj(*texts: str) -> Trajectory:
    turns = [Turn(action_ids=[], action_logprobs=[], action_text=t) for t in texts]
    return Trajectory(task=Task(id="t", messages=()), prompt_ids=[], turns=turns)


def const(value: float | None, name: str) -> FunctionReward:
    return FunctionReward(lambda _t: value, name=name)


def test_weighted_sum_adds_weighted_parts() -> None:
    r = WeightedSum([(const(1.0, "a"), 0.7), (const(0.5, "b"), 0.2)])
    assert r(traj("x")) == pytest.approx(0.8)


def test_weighted_sum_is_none_when_a_counted_part_is_none() -> None:
    assert WeightedSum([(const(1.0, "a"), 1.0), (const(None, "b"), 0.5)])(traj("x")) is None


def test_weighted_sum_ignores_none_with_zero_weight() -> None:
    assert WeightedSum([(const(1.0, "a"), 1.0), (const(None, "b"), 0.0)])(traj("x")) == 1.0


def test_weighted_sum_reports_parts_by_name() -> None:
    r = WeightedSum([(const(1.0, "a"), 1.0), (const(0.0, "b"), 1.0)])
    assert r.part_scores(traj("x")) == {"a": 1.0, "b": 0.0}


def test_gate_closed_pays_otherwise() -> None:
    assert Gate(const(0.0, "fmt"), const(1.0, "ok"))(traj("x")) == 0.0


def test_gate_open_pays_the_inner_reward() -> None:
    assert Gate(const(1.0, "fmt"), const(0.25, "ok"))(traj("x")) == 0.25


def test_gate_unjudged_is_none() -> None:
    assert Gate(const(None, "fmt"), const(1.0, "ok"))(traj("x")) is None


def test_per_turn_scores_each_turn_and_aggregates() -> None:
    r = PerTurn(lambda t, i: float(len(t.turns[i].action_text)), aggregate="sum")
    t = traj("ab", "abc")
    assert (r.turn_scores(t), r(t)) == ([2.0, 3.0], 5.0)


def test_per_turn_mean_and_min() -> None:
    t = traj("a", "abc")
    scorer = PerTurn(lambda tr, i: float(len(tr.turns[i].action_text)))
    assert scorer(t) == 2.0
    assert PerTurn(scorer.scorer, aggregate="min")(t) == 1.0


@pytest.mark.parametrize(("text", "score"), [
    ("<think>work</think><answer>42</answer>", 1.0),
    ("<think>work</think><answer></answer>", 0.0),
    ("<answer>42</answer>", 0.0),
    ("<think>a</think><answer>1</answer><answer>2</answer>", 0.0),
    ("<think><think>x</think></think><answer>1</answer>", 0.0),
])
def test_format_reward_demands_one_think_and_one_nonempty_answer(text: str, score: float) -> None:
    assert FormatReward()(traj(text)) == score

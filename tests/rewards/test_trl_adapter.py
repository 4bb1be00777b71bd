"""The TRL adapter: signature, trajectory building, containment of failures."""

from __future__ import annotations

from tracerl.rewards import FunctionReward, trl_reward_func
from tracerl.rewards.trl import trajectory_from_sample
from tracerl.types import Trajectory


def test_scores_each_completion_with_dataset_columns() -> None:
    def matches(t: Trajectory) -> float:
        return float(t.final_text.strip() == t.task.answer)

    fn = trl_reward_func(FunctionReward(matches, name="exact"))
    out = fn(["q1", "q2"], ["4", "5"], completion_ids=[[1], [2]], answer=["4", "6"])
    assert out == [1.0, 0.0] and fn.__name__ == "exact"


def test_conversational_prompts_and_completions() -> None:
    prompt = [{"role": "user", "content": "hi"}]
    completion = [{"role": "assistant", "content": "hello"}]
    t = trajectory_from_sample(prompt, completion, {"tests": "assert True"}, 0)
    assert t.task.messages[0].content == "hi" and t.final_text == "hello"
    assert t.task.metadata["tests"] == "assert True" and t.turns[0].action_ids == []


def test_a_raising_reward_gives_none_and_is_counted() -> None:
    def broken(t: Trajectory) -> float:
        raise RuntimeError("judge down")

    fn = trl_reward_func(FunctionReward(broken))
    assert fn(["q"], ["a"]) == [None] and fn.failures == 1


def test_none_from_the_reward_skips_the_sample() -> None:
    fn = trl_reward_func(FunctionReward(lambda t: None, name="unjudged"))
    assert fn(["q", "r"], ["a", "b"]) == [None, None]


def test_math_answer_through_trl(pool: object) -> None:
    from tracerl.rewards import MathAnswerReward

    fn = trl_reward_func(MathAnswerReward())
    assert fn(["2+2?", "2+2?"], ["\\boxed{4}", "\\boxed{5}"], answer=["4", "4"]) == [1.0, 0.0]

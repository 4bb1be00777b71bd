"""math_answer: equivalences, non-equivalences, extraction, hedging, timeouts, threads."""

from __future__ import annotations

import threading

import pytest

from tracerl.rewards import MathAnswerReward, extract_answer, math_answer, math_answer_batch
from tracerl.types import Message, Task, Trajectory, Turn

EQUAL = [
    ("\\frac{1}{2}", "So the answer is \\boxed{0.5}."),
    ("\\frac{1}{2}", "\\boxed{\\frac{2}{4}}"),
    ("x^2 + 2x + 1", "\\boxed{(x+1)^2}"),
    ("391", "<answer>391</answer>"),
    ("391", "17 * 23 = 391. Answer: 391"),
    ("\\sqrt{2}", "\\boxed{2^{1/2}}"),
    ("3", "We get 1 + 2 = 3"),
]
NOT_EQUAL = [
    ("\\frac{1}{2}", "\\boxed{0.51}"),
    ("391", "Answer: 381"),
    ("x^2", "\\boxed{2x}"),
    ("\\sqrt{2}", "\\boxed{1.41}"),
]


@pytest.mark.parametrize(("gold", "completion"), EQUAL)
def test_equivalent_answers_score_one(gold: str, completion: str) -> None:
    assert math_answer(completion, gold).score == 1.0


@pytest.mark.parametrize(("gold", "completion"), NOT_EQUAL)
def test_different_answers_score_zero(gold: str, completion: str) -> None:
    r = math_answer(completion, gold)
    assert (r.score, r.status) == (0.0, "wrong")


def test_no_answer_scores_zero_with_reason() -> None:
    assert math_answer("I do not know.", "391").status == "no_answer"


def test_several_different_boxed_answers_are_hedging() -> None:
    r = math_answer("\\boxed{381} or maybe \\boxed{391}", "391")
    assert (r.score, r.status) == (0.0, "ambiguous")


def test_extraction_prefers_boxed_then_tag_then_answer_line_then_number() -> None:
    assert extract_answer("<answer>5</answer> \\boxed{6}") == ("6", "boxed")
    assert extract_answer("Answer: 7 <answer>8</answer>") == ("8", "tag")
    assert extract_answer("3 then Answer: 9.") == ("9", "answer_line")
    assert extract_answer("first 1 then 2") == ("2", "last_number")


def test_works_from_a_non_main_thread() -> None:
    out: list[float | None] = []
    t = threading.Thread(target=lambda: out.append(math_answer("\\boxed{0.5}", "1/2").score))
    t.start()
    t.join()
    assert out == [1.0]


@pytest.mark.slow  # waits out the verifier's timeout
def test_a_verification_that_hangs_is_killed_and_scores_zero() -> None:
    r = math_answer("\\boxed{9^{9^{9^{9^{9}}}}}", "391", timeout_s=1)
    assert r.score == 0.0 and r.status in ("timeout", "wrong", "memory_limit")


def test_empty_gold_is_rejected() -> None:
    with pytest.raises(ValueError, match="gold"):
        math_answer("\\boxed{1}", " ")


def test_gold_the_checker_cannot_parse_is_unjudged_not_wrong() -> None:
    r = math_answer("\\boxed{5}", "\\boxed{}")
    assert (r.score, r.status) == (None, "bad_gold")
    assert "gold" in r.details["error"]


@pytest.mark.slow  # one session per single call
def test_a_batch_gives_what_single_calls_give_in_input_order() -> None:
    cases = EQUAL + NOT_EQUAL + [("391", "I do not know."), ("391", "\\boxed{381} or \\boxed{391}")]
    golds, comps = zip(*cases, strict=True)
    batch = math_answer_batch(list(comps), list(golds))
    single = [math_answer(c, g) for g, c in cases]
    assert [(r.score, r.status) for r in batch] == [(r.score, r.status) for r in single]


def test_plain_numbers_never_reach_the_sandbox() -> None:
    r = math_answer_batch(["\\boxed{12}", "Answer: 13"], ["12", "12"])
    assert [(x.score, x.details.get("exact")) for x in r] == [(1.0, True), (0.0, True)]


def test_batch_inputs_are_checked() -> None:
    with pytest.raises(ValueError, match="2 completions but 1 gold"):
        math_answer_batch(["1", "2"], ["1"])
    with pytest.raises(TypeError, match="sequences"):
        math_answer_batch("\\boxed{1}", "1")  # type: ignore[arg-type]


def _trajectory(text: str, answer: str) -> Trajectory:
    task = Task(id="t", messages=(Message("user", "q"),), answer=answer)
    return Trajectory(task=task, prompt_ids=[], turns=[Turn([], [], action_text=text)])


def test_the_reward_scores_a_rollout_batch_at_once() -> None:
    reward = MathAnswerReward()
    trajs = [_trajectory("\\boxed{\\frac{2}{4}}", "1/2"), _trajectory("\\boxed{3}", "4")]
    assert reward.batch(trajs) == [1.0, 0.0] == [reward(t) for t in trajs]


@pytest.mark.slow  # waits out two timeouts
def test_a_hanging_answer_times_out_alone_and_the_rest_of_its_batch_is_judged() -> None:
    comps = ["\\boxed{\\frac{2}{4}}", "\\boxed{9^{9^{9^{9^{9}}}}}", "\\boxed{x^2+2x+1}",
             "\\boxed{10^{10^{10^{10}}}!}", "\\boxed{2^{1/2}}"]
    golds = ["1/2", "391", "(x+1)^2", "7", "\\sqrt{2}"]
    r = math_answer_batch(comps, golds, timeout_s=1)
    assert [x.score for x in r] == [1.0, 0.0, 1.0, 0.0, 1.0]
    assert r[1].status in ("timeout", "memory_limit") and r[3].status in ("timeout", "memory_limit")

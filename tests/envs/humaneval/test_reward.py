from tracerl.envs.humaneval.data import load_problems
from tracerl.envs.humaneval.reward import HumanEvalReward, score_reply
from tracerl.envs.humaneval.task import answer_message, problem_task
from tracerl.types import Status, ToolCall, Trajectory, Turn


def _score(problem, reply):
    return score_reply(reply, problem.prompt, problem.hidden_tests, problem.entry_point)


def test_every_canonical_solution_passes_in_the_sandbox():
    """As HumanEval stores it (a body), and as the SFT demonstrations write it."""
    failed = [(p.task_id, shape) for p in load_problems()
              for shape, reply in (("body", p.canonical_solution),
                                   ("demo", answer_message(p).content))
              if _score(p, reply).score != 1.0]
    assert failed == []


def test_broken_replies_score_zero_and_say_why():
    p = load_problems()[0]
    assert _score(p, "    return not " + p.canonical_solution.strip().split("return ")[-1]
                  ).score == 0.0
    raised = _score(p, "    raise ValueError('no')\n")
    assert raised.score == 0.0 and raised.status == "wrong"
    assert _score(p, "    return (\n").status == "error"  # does not load
    slow = _score(p, "    while True:\n        pass\n")
    assert slow.score == 0.0


def test_body_and_whole_function_replies_score_alike():
    p = load_problems()[2]
    body = _score(p, p.canonical_solution)
    whole = _score(p, f"```python\n{p.solution}```")
    assert (body.score, body.details["shape"]) == (1.0, "body")
    assert (whole.score, whole.details["shape"]) == (1.0, "function")


def test_redefining_the_prompts_helper_does_not_pay():
    p = next(p for p in load_problems() if p.task_id == "HumanEval/38")
    identity = "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n"
    assert _score(p, identity).score == 0.0
    # a correct answer that restates the helper still passes
    assert _score(p, f"```python\n{p.solution}```").score == 1.0


def test_an_episode_that_ends_on_a_tool_call_gave_no_answer():
    p = load_problems()[0]
    task = problem_task(p, agentic=True)
    call = ToolCall("run_python", {"code": "print(1)"}, id="c0")
    turn = Turn([], [], f"```python\n{p.solution}```", tool_calls=[call])
    result = HumanEvalReward().result(Trajectory(task=task, prompt_ids=[], turns=[turn],
                                                 status=Status.TRUNCATED))
    assert (result.score, result.status) == (0.0, "no_answer")

import pytest

from tracerl.optimize.feedback import UnusableReply, failures, parse_prompt, trace_text
from tracerl.types import Message, Task, ToolCall, ToolResult, Trajectory, Turn


def test_the_prompt_is_taken_from_tags_fences_or_the_whole_reply():
    assert parse_prompt("Sure! <prompt>Call the calculator first.</prompt>", "") == \
        "Call the calculator first."
    fenced = "```\nAlways answer as Answer: N.\n```"
    assert parse_prompt(fenced, "") == "Always answer as Answer: N."
    assert parse_prompt("New instruction: Think, then answer.", "") == "Think, then answer."


@pytest.mark.parametrize("reply, why", [
    ("", "no prompt text"), ("<prompt> </prompt>", "no prompt text"),
    ("<|im_start|>assistant hello there", "chat-template tokens"),
    ("}{{[]]]]((( 12 34 ++", "not prose"), ("Use the tool.", "repeats the current text"),
    ("x" * 2001, "2001 characters"),
])
def test_unusable_replies_say_why(reply, why):
    with pytest.raises(UnusableReply, match=why):
        parse_prompt(reply, "Use the tool.")


def test_a_trace_shows_tool_calls_results_expected_answer_and_score():
    call = ToolCall("calculator", {"expression": "12*34"}, id="c0")
    turns = [Turn([1], [0.0], "<tool_call>...</tool_call>", text="<tool_call>...</tool_call>",
                  tool_results=[ToolResult(call, "408")]),
             Turn([2], [0.0], "Answer: 407", text="Answer: 407")]
    traj = Trajectory(Task("t", (Message("user", "Compute (12*34)."),), answer="408"), [1],
                      turns, outcome_reward=0.0)
    text = trace_text(traj)
    assert 'tool calculator({"expression": "12*34"}) -> 408' in text
    assert "Expected answer: 408" in text and "Score: 0.00" in text
    assert "Agent turn 2: Answer: 407" in text
    solved = Trajectory(traj.task, [1], turns, outcome_reward=1.0)
    assert failures([solved, traj], 3).count("Task:") == 1

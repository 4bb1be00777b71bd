import pytest

from tracerl.optimize.prompt import Prompt, PromptError, apply_prompt, render_prompt
from tracerl.types import Message, Task

TASK = Task("t1", (Message("user", "Compute (12*34)."),), answer="408")
EXAMPLES = {"ex": (Message("user", "Compute (2*3)."), Message("assistant", "Answer: 6"))}


def test_slots_land_where_their_names_say():
    prompt = Prompt(system="Be exact.", prefix="Question:", instruction="Answer last.",
                    examples=("ex",))
    messages = apply_prompt(prompt, TASK, EXAMPLES).messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[0].content == "Be exact."
    assert messages[1:3] == EXAMPLES["ex"]
    assert messages[3].content == "Question:\n\nCompute (12*34).\n\nAnswer last."


def test_a_task_system_message_is_extended_not_replaced():
    task = Task("t2", (Message("system", "Family rules."), Message("user", "Hi")))
    messages = apply_prompt(Prompt(system="Mine."), task, {}).messages
    assert messages[0] == Message("system", "Mine.\n\nFamily rules.")
    assert apply_prompt(Prompt(), task, {}).messages == task.messages


def test_unknown_slots_and_examples_are_named():
    with pytest.raises(PromptError, match="unknown prompt slot 'footer'"):
        Prompt.from_dict({"footer": "x"})
    with pytest.raises(PromptError, match="'nope' is not in the example pool"):
        apply_prompt(Prompt(examples=("nope",)), TASK, EXAMPLES)


def test_round_trip_and_rendering():
    prompt = Prompt(instruction="Use the tool.", examples=("ex",))
    assert Prompt.from_dict(prompt.to_dict()) == prompt
    text = render_prompt(prompt, EXAMPLES)
    assert "## instruction\nUse the tool." in text and "[assistant] Answer: 6" in text

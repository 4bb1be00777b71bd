"""Tools described to the model: in its own format when the chat template supports
`tools=`, else the default tool prompt in the system message; how turns end."""

import pytest

from tracerl.envs.calc import make_calculator
from tracerl.rollout.render import ChatRenderer
from tracerl.tools.hermes import describe_tools
from tracerl.types import Message

TOOLS = [make_calculator().schema]
CHAT = [Message("user", "Compute (2*3).")]


@pytest.mark.parametrize(("name", "native"), [
    ("tiny", False), ("qwen", True), pytest.param("smollm2", False, marks=pytest.mark.slow)])
def test_tool_support_is_detected_by_rendering(chat_tokenizer, name, native):
    assert ChatRenderer(chat_tokenizer(name)).native_tools is native


def test_a_template_with_tools_describes_them_itself(chat_tokenizer):
    renderer = ChatRenderer(chat_tokenizer("qwen"))
    text = renderer.render(CHAT, add_generation_prompt=True, tools=TOOLS)
    assert text.startswith("<|im_start|>system\nYou are a helpful assistant.\n\n# Tools")
    assert '"name": "calculator"' in text and describe_tools(TOOLS) not in text


@pytest.mark.parametrize("name", ["tiny", pytest.param("smollm2", marks=pytest.mark.slow)])
def test_a_template_without_tools_gets_the_default_tool_prompt(chat_tokenizer, name):
    renderer = ChatRenderer(chat_tokenizer(name))
    text = renderer.render(CHAT, add_generation_prompt=True, tools=TOOLS)
    assert text.startswith(f"<|im_start|>system\n{describe_tools(TOOLS)}<|im_end|>\n")
    assert renderer.render(CHAT, add_generation_prompt=True) != text


def test_the_default_tool_prompt_joins_an_existing_system_message(chat_tokenizer):
    renderer = ChatRenderer(chat_tokenizer("tiny"))
    text = renderer.render([Message("system", "Be brief."), *CHAT], False, tools=TOOLS)
    assert text.startswith(f"<|im_start|>system\nBe brief.\n\n{describe_tools(TOOLS)}<|im_end|>")
    assert text.count("<|im_start|>system") == 1


def test_the_default_tool_prompt_lists_schemas_and_the_call_format():
    text = describe_tools(TOOLS)
    assert '"name": "calculator"' in text and '"expression"' in text
    assert '<tool_call>{"name": <function-name>, "arguments": <args-json-object>}</tool_call>' \
        in text


def test_turns_end_after_a_tool_call_or_at_the_turn_end(chat_tokenizer):
    renderer = ChatRenderer(chat_tokenizer("tiny"))
    assert renderer.turn_end == "<|im_end|>"
    assert renderer.stop_strings == ("</tool_call>", "<|im_end|>")

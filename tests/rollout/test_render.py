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
    ("tiny", False), ("qwen", True), pytest.param("smollm2", False, marks=pytest.mark.slow),
    pytest.param("gemma3", False, marks=pytest.mark.slow)])
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


@pytest.mark.slow  # Gemma 3's real tokenizer (262k tokens)
def test_gemma_folds_the_system_prompt_into_the_first_user_turn(chat_tokenizer):
    renderer = ChatRenderer(chat_tokenizer("gemma3"))
    text = renderer.render([Message("system", "Be brief."), *CHAT], True, tools=TOOLS)
    assert text == (f"<bos><start_of_turn>user\nBe brief.\n\n{describe_tools(TOOLS)}\n\n"
                    "Compute (2*3).<end_of_turn>\n<start_of_turn>model\n")
    assert renderer.turn_end == "<end_of_turn>"
    assert renderer.stop_strings == ("</tool_call>", "<end_of_turn>")


@pytest.mark.slow
def test_gemma_gives_tool_results_back_in_one_user_turn(chat_tokenizer):
    renderer = ChatRenderer(chat_tokenizer("gemma3"))
    chat = [*CHAT, Message("assistant", "<tool_call>{}</tool_call>"),
            Message("tool", "6", name="calculator"), Message("tool", "7", name="calculator")]
    text = renderer.render(chat, add_generation_prompt=True)
    assert text.endswith("<start_of_turn>model\n<tool_call>{}</tool_call><end_of_turn>\n"
                         "<start_of_turn>user\n<tool_response>\n6\n</tool_response>\n"
                         "<tool_response>\n7\n</tool_response><end_of_turn>\n"
                         "<start_of_turn>model\n")

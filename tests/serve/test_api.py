import pytest

from tracerl.serve.api import APIError, Choice, completion_body, parse_request
from tracerl.types import ToolCall

TOOL = {"type": "function", "function": {"name": "calculator", "parameters": {
    "type": "object", "properties": {"expression": {"type": "string"}}}}}


def body(**kw):
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **kw}


def test_a_full_request_is_read():
    req = parse_request(body(
        tools=[TOOL], tool_choice={"type": "function", "function": {"name": "calculator"}},
        temperature=0.5, top_p=0.9, n=3, max_completion_tokens=7, stop="END", stream=True,
        stream_options={"include_usage": True}, logprobs=True, seed=1, user="u",
        episode_id="e1", messages=[{"role": "developer", "content": "be brief"},
                                   {"role": "user", "content": [{"type": "text", "text": "x"}]}]),
        headers={"X-Task-Id": "t9"})
    assert req.tool_choice == "calculator" and req.n == 3 and req.max_tokens == 7
    assert req.stop == ("END",) and req.stream and req.include_usage and req.logprobs
    assert (req.episode_id, req.task_id) == ("e1", "t9")
    assert [m.role for m in req.messages] == ["system", "user"]
    assert req.messages[1].content == "x"


def test_assistant_tool_calls_come_back_as_tool_calls():
    req = parse_request(body(messages=[
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "c1", "type": "function",
            "function": {"name": "calculator", "arguments": '{"expression": "1+2"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "3"}]))
    assert req.messages[1].tool_calls == (ToolCall("calculator", {"expression": "1+2"}, "c1"),)
    assert req.messages[1].content == ""


@pytest.mark.parametrize("bad, param", [
    ({"messages": []}, "messages"),
    ({"model": ""}, "model"),
    ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
    ({"messages": ["hi"]}, "messages[0]"),
    ({"tools": [{"type": "function", "function": {"name": "a b"}}]}, "tools[0].function.name"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "objekt"}}}]}, "tools[0].function.parameters"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "string"}}}]}, "tools[0].function.parameters"),
    ({"tools": [TOOL, TOOL]}, "tools[1].function.name"),
    ({"tools": [TOOL], "tool_choice": {"type": "function", "function": {"name": "nope"}}},
     "tool_choice"),
    ({"tool_choice": "required"}, "tool_choice"),
    ({"temperature": 3}, "temperature"),
    ({"top_p": 0}, "top_p"),
    ({"n": 0}, "n"),
    ({"n": 17}, "n"),
    ({"max_tokens": "9"}, "max_tokens"),
    ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
    ({"presence_penalty": 0.5}, "presence_penalty"),
    ({"logit_bias": {"1": 5}}, "logit_bias"),
    ({"top_logprobs": 2}, "top_logprobs"),
    ({"response_format": {"type": "json_object"}}, "response_format"),
    ({"episode_id": 5}, "episode_id"),
    # the malformed shapes of issue 32, each a 500 before
    ({"tools": [TOOL], "tool_choice": {"type": "function", "function": "f"}}, "tool_choice"),
    ({"messages": [{"role": "assistant", "content": "", "tool_calls": ["f"]}]},
     "messages[0].tool_calls[0]"),
    ({"messages": [{"role": "assistant", "content": "", "tool_calls": {"a": 1}}]},
     "messages[0].tool_calls"),
    ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": 3}}]}]},
     "messages[0].tool_calls[0].function.name"),
    ({"messages": [{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": "[1]"}}]}]},
     "messages[0].tool_calls[0].function.arguments"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
     "messages[0].content[0].text"),
    ({"messages": [{"role": "user", "name": 7, "content": "x"}]}, "messages[0].name"),
    ({"messages": [{"role": "user", "content": "x", "tool_calls": ["f"]}]},
     "messages[0].tool_calls"),
    ({"stream": "false"}, "stream"),
    ({"logprobs": 1}, "logprobs"),
    ({"stream_options": {"include_usage": "yes"}}, "stream_options.include_usage"),
    ({"temperature": float("nan")}, "temperature"),
    ({"temperature": float("inf")}, "temperature"),
    ({"top_p": float("nan")}, "top_p"),
    ({"episode_id": "e" * 300}, "episode_id"),
    ({"tools": [{"type": "function", "function": {"name": "f", "description": 3}}]},
     "tools[0].function.description"),
])
def test_bad_fields_are_named(bad, param):
    with pytest.raises(APIError) as e:
        parse_request(body(**bad))
    assert e.value.status == 400 and e.value.param == param
    assert e.value.body()["error"]["type"] == "invalid_request_error"


def test_a_body_that_is_not_an_object():
    with pytest.raises(APIError, match="JSON object"):
        parse_request(["model"])


def test_completion_body_has_openai_shape():
    call = ToolCall("calculator", {"expression": "1+2"}, "call_1")
    out = completion_body("chatcmpl-1", "m", [
        Choice("", (call,), "tool_calls", ("a",), (-0.5,)), Choice("hi", (), "stop")],
        10, 3, logprobs=True, fingerprint="tracerl-v0")
    first, second = out["choices"]
    assert first["message"] == {"role": "assistant", "content": None,
                                "tool_calls": [call.to_openai()]}
    assert first["finish_reason"] == "tool_calls"
    assert first["logprobs"]["content"][0]["logprob"] == -0.5
    assert second["message"] == {"role": "assistant", "content": "hi"}
    assert out["usage"] == {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}

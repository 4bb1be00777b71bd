import json
from pathlib import Path

from tracerl.tools.hermes import format_tool_call, parse_tool_calls
from tracerl.types import ToolCall


def test_parses_calls_and_keeps_content():
    text = 'Let me see. <tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>'
    p = parse_tool_calls(text)
    assert p.content == "Let me see."
    assert [(c.name, c.arguments) for c in p.calls] == [("f", {"x": 1})]
    assert not p.malformed


def test_plain_text_has_no_tool_use():
    assert not parse_tool_calls("Answer: 42").has_tool_use


def test_malformed_json_is_reported_not_raised():
    p = parse_tool_calls('<tool_call>{"name": "f", "arguments": {x}}</tool_call>')
    assert not p.calls and "invalid JSON" in p.malformed[0].reason


def test_unterminated_block():
    p = parse_tool_calls('<tool_call>{"name": "f"')
    assert "unterminated" in p.malformed[0].reason


def test_wrong_shapes():
    assert "string \"name\"" in parse_tool_calls("<tool_call>[1]</tool_call>").malformed[0].reason
    p = parse_tool_calls('<tool_call>{"name": "f", "arguments": 3}</tool_call>')
    assert "must be a JSON object" in p.malformed[0].reason


def test_string_arguments_are_decoded():
    p = parse_tool_calls('<tool_call>{"name": "f", "arguments": "{\\"a\\": 2}"}</tool_call>')
    assert p.calls[0].arguments == {"a": 2}


def test_format_round_trips():
    call = ToolCall("calculator", {"expression": "1+2"})
    parsed = parse_tool_calls(format_tool_call(call)).calls[0]
    assert (parsed.name, parsed.arguments) == (call.name, call.arguments)


def test_a_json_list_in_one_block_is_one_call_per_object():
    # SmolLM2's trained form: a list of calls inside one block
    text = ('<tool_call>[\n{"name": "f", "arguments": {"x": 1}},\n'
            '{"name": "g", "arguments": {"y": "z"}}\n]</tool_call>')
    p = parse_tool_calls(text)
    assert [(c.name, c.arguments, c.id) for c in p.calls] == [
        ("f", {"x": 1}, "call_0"), ("g", {"y": "z"}, "call_1")]
    assert not p.malformed and p.content == ""


def test_an_empty_list_is_no_call():
    p = parse_tool_calls("No tool fits. <tool_call>[]</tool_call>")
    assert not p.has_tool_use and p.content == "No tool fits."


def test_a_bad_object_in_a_list_is_malformed_alone_and_ids_stay_unique():
    text = ('<tool_call>[{"name": "f"}, {"arguments": {}}]</tool_call>'
            '<tool_call>{"name": "h", "arguments": {}}</tool_call>')
    p = parse_tool_calls(text)
    assert [(c.name, c.id) for c in p.calls] == [("f", "call_0"), ("h", "call_2")]
    assert len(p.malformed) == 1 and 'string "name"' in p.malformed[0].reason
    assert p.malformed[0].text == '{"arguments": {}}'


SMOLLM2 = json.loads((Path(__file__).parent / "smollm2_tool_calls.json").read_text())


def test_smollm2_real_outputs_without_a_call_block_stay_plain_text():
    # its own tool prompt: the 135M model answered in prose, or made up a tool response
    plain = [r for r in SMOLLM2["records"] if "<tool_call>" not in r["output"]]
    assert len(plain) >= 10
    for r in plain:
        p = parse_tool_calls(r["output"])
        assert not p.has_tool_use and p.content == r["output"].strip()


def test_smollm2_real_calls_cut_at_the_token_budget_are_malformed_not_calls():
    # 2 of 64 sampled first turns on calc opened a block and ran out of 48 tokens
    opened = [r for r in SMOLLM2["records"] if "<tool_call>" in r["output"]]
    assert len(opened) == 2
    for r in opened:
        p = parse_tool_calls(r["output"])
        assert not p.calls and len(p.malformed) == 1
        assert p.malformed[0].reason.startswith("unterminated <tool_call>")

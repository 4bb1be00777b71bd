from tracerl.policy.sampling import Sample
from tracerl.serve.episodes import Call
from tracerl.serve.history import as_rendered, find_parent, same_reply, written_text
from tracerl.types import Message, ToolCall

USER = Message("user", "Compute (3*4).")
CALL = ToolCall("calculator", {"expression": "3*4"}, "call_a")
REPLY = Message("assistant", "", tool_calls=(CALL,))
TOOL = Message("tool", "12", tool_call_id="call_a")


def call(messages, reply=REPLY, parent=None):
    return Call(id="c", messages=tuple(messages), rendered=list(messages), tools=[],
                context=[1, 2], parent=parent, samples=[Sample([3], [0.0], "stop")],
                texts=["x"], replies=[reply], policy_version=0)


def test_a_continued_reply_is_found():
    first = call([USER])
    link, why = find_parent([first], [USER, REPLY, TOOL])
    assert why is None and link.call is first and link.choice == 0


def test_the_longest_recorded_prompt_wins():
    first = call([USER])
    second = call([USER, REPLY, TOOL], reply=Message("assistant", "Answer: 12"))
    link, _ = find_parent([first, second],
                          [USER, REPLY, TOOL, Message("assistant", "Answer: 12"),
                           Message("user", "again")])
    assert link.call is second


def test_reserialised_arguments_and_whitespace_still_match():
    sent = Message("assistant", "  ", tool_calls=(ToolCall("calculator", {"expression": "3*4"},
                                                            "other-id"),))
    assert same_reply(sent, REPLY)
    edited = Message("assistant", "", tool_calls=(ToolCall("calculator", {"expression": "3*5"}),))
    assert not same_reply(edited, REPLY)


def test_a_fresh_conversation_is_a_new_root_not_a_mismatch():
    assert find_parent([], [USER]) == (None, None)
    assert find_parent([call([USER])], [Message("user", "another question")]) == (None, None)
    # few-shot assistant messages in a conversation that was never recorded
    shot = [Message("user", "2+2?"), Message("assistant", "4"), USER]
    assert find_parent([], shot) == (None, None)


def test_an_edited_reply_is_a_mismatch():
    edited = Message("assistant", "", tool_calls=(ToolCall("calculator", {"expression": "9*9"}),))
    link, why = find_parent([call([USER])], [USER, edited, TOOL])
    assert link is None and "messages[1]" in why


def test_an_edited_later_reply_is_a_mismatch():
    first = call([USER])
    link, why = find_parent([first], [USER, REPLY, TOOL, Message("assistant", "made up"), TOOL])
    assert link is None and "later assistant message" in why


def test_foreign_replies_are_written_in_the_hermes_format():
    text = written_text(Message("assistant", "ok", tool_calls=(CALL,)))
    assert text == 'ok\n<tool_call>{"name": "calculator", "arguments": {"expression": "3*4"}}' \
                   "</tool_call>"
    assert as_rendered([USER, REPLY])[1].content.startswith("<tool_call>")

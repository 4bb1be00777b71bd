"""Matching the history a client sends back to the calls this server recorded.

An agent sends the whole conversation with every request. The assistant messages in it
are the server's own replies, in OpenAI form (content without the tool-call text,
`tool_calls` as JSON). Re-rendering them through the chat template would give text, and
then ids, that the policy never sampled (retokenization drift: verl #3720, TRL #5144).
So the server finds the recorded call whose prompt the history extends, checks that the
next message is one of the replies it returned for that call, and continues from the
call's recorded context plus the exact sampled ids; only what came after the reply (tool
results, user turns) is rendered, as the chat template's delta (ChatRenderer).

A history that holds an assistant message this server did not return in the episode (the
client edited or re-wrote it, or the conversation comes from elsewhere) is a mismatch:
`find_parent` says why, and the recorder handles it as configured (docs/serve.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tracerl.serve.episodes import Call, Link
from tracerl.tools.hermes import format_tool_call
from tracerl.types import Message


def _calls_key(m: Message) -> list[tuple[str, str]]:
    return [(c.name, json.dumps(c.arguments, sort_keys=True)) for c in m.tool_calls]


def same_reply(sent: Message, returned: Message) -> bool:
    """Whether a history message is the reply the server returned. Tool-call arguments
    compare as JSON values and content without surrounding whitespace, so a client's
    re-serialisation matches; any edit of text, tool name or argument does not."""
    return (sent.role == "assistant" and sent.content.strip() == returned.content.strip()
            and _calls_key(sent) == _calls_key(returned))


def written_text(m: Message) -> str:
    """An assistant message this server did not sample, as the model would have written it
    (content, then each call in the Hermes format the server parses)."""
    parts = [m.content] if m.content else []
    parts += [format_tool_call(c) for c in m.tool_calls]
    return "\n".join(parts)


def as_rendered(messages: Sequence[Message]) -> list[Message]:
    """Messages in the form the chat template renders: assistant content holds the
    tool-call text (tracerl's convention, rollout/render.py)."""
    return [Message("assistant", written_text(m)) if m.role == "assistant" and m.tool_calls
            else m for m in messages]


def _extends(link: Link, messages: Sequence[Message]) -> bool:
    call, n = link.call, len(link.call.messages)
    reply = call.replies[link.choice]
    return (reply is not None and len(messages) > n
            and tuple(messages[:n]) == call.messages and same_reply(messages[n], reply))


def _common_prefix(a: Sequence[Message], b: Sequence[Message]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def find_parent(calls: Sequence[Call], messages: Sequence[Message]
                ) -> tuple[Link | None, str | None]:
    """The recorded choice `messages` continues (the longest prompt wins), and why not.

    Returns (link, None) on a match; (None, None) for a conversation to start afresh (a
    new root: nothing recorded yet, or a conversation that leaves the recorded ones
    before any assistant message); (None, reason) for a mismatch: after the point where
    `messages` leaves every recorded conversation there is an assistant message this
    server did not return there (the client edited or re-wrote a reply or what preceded it).
    """
    best: Link | None = None
    for call in reversed(calls):
        if best is not None and len(call.messages) <= len(best.call.messages):
            continue
        for k in range(len(call.samples)):
            link = Link(call, k)
            if _extends(link, messages):
                best = link
                break
    if best is not None:
        later = messages[len(best.call.messages) + 1:]
        if any(m.role == "assistant" for m in later):
            return None, ("the history continues a recorded reply but holds a later "
                          "assistant message this server did not return (edited?)")
        return best, None
    shared = max((_common_prefix(c.messages, messages) for c in calls), default=0)
    if shared == 0:
        return None, None
    at = next((i for i, m in enumerate(messages) if i >= shared and m.role == "assistant"),
              None)
    if at is None:
        return None, None
    return None, (f"messages[{at}] (assistant) is not a reply this server returned in this "
                  "episode, or a message before it was edited")

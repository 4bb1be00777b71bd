"""What optimizers show the teacher, and how its reply becomes a prompt.

Rollouts are shown as their full traces: the task, every assistant turn, every tool
call with its arguments and the tool's answer, the expected answer and the score (GEPA
reads these; the others read the failures only). Texts are clipped so a small
teacher's context holds several examples.

A reply is usable when, after taking the text between `<prompt>` and `</prompt>` (or
inside a code fence, or the whole reply) and dropping a leading label such as
"New instruction:", it is non-empty, mostly text, free of chat-template tokens, not too
long and different from the text it replaces. Anything else raises `UnusableReply`,
which the search records as a skipped candidate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from tracerl.types import Message, Trajectory

CLIP = 240
MAX_PROMPT_CHARS = 2000
_TAGGED = re.compile(r"<prompt>(.*?)(?:</prompt>|$)", re.S | re.I)
_FENCED = re.compile(r"```[a-z]*\n(.*?)(?:```|$)", re.S)
_LABEL = re.compile(r"^\s*(?:new|improved|revised|updated|better)?\s*"
                    r"(?:prompt|instruction|instructions|text)\s*:\s*", re.I)
_TEMPLATE_TOKENS = ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|eot_id|>")


class UnusableReply(ValueError):
    """The teacher's reply is not a prompt the search can use (the message says why)."""


def clip(text: str, n: int = CLIP) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def parse_prompt(reply: str, old: str) -> str:
    """The new prompt text in a teacher reply (see module docstring)."""
    m = _TAGGED.search(reply) or _FENCED.search(reply)
    text = (m.group(1) if m else reply).strip()
    text = _LABEL.sub("", text).strip().strip('"').strip()
    if not text:
        raise UnusableReply("the reply holds no prompt text")
    if any(t in text for t in _TEMPLATE_TOKENS):
        raise UnusableReply("the reply contains chat-template tokens")
    if len(text) > MAX_PROMPT_CHARS:
        raise UnusableReply(f"the reply is {len(text)} characters (at most {MAX_PROMPT_CHARS})")
    letters = sum(c.isalpha() or c.isspace() for c in text)
    if len(text) < 8 or letters < 0.6 * len(text):
        raise UnusableReply(f"the reply is not prose: {clip(text, 60)!r}")
    if text == old.strip():
        raise UnusableReply("the reply repeats the current text")
    return text


def _task_text(traj: Trajectory) -> str:
    users = [m.content for m in traj.task.messages if m.role == "user"]
    return clip(users[-1] if users else "")


def trace_text(traj: Trajectory, with_tools: bool = True) -> str:
    """One rollout as the teacher reads it: task, turns, tool calls and results, score."""
    lines = [f"Task: {_task_text(traj)}"]
    for i, turn in enumerate(traj.turns, start=1):
        lines.append(f"Agent turn {i}: {clip(turn.readable_text)}")
        if with_tools:
            for r in turn.tool_results:
                args = json.dumps(r.call.arguments)
                lines.append(f"  tool {r.call.name or '?'}({clip(args, 80)}) -> "
                             f"{clip(r.content, 80)}")
    if traj.error:
        lines.append(f"Error: {clip(traj.error)}")
    if traj.task.answer is not None:
        lines.append(f"Expected answer: {clip(str(traj.task.answer), 80)}")
    score = traj.outcome_reward
    lines.append(f"Score: {'not judged' if score is None else f'{score:.2f}'}")
    return "\n".join(lines)


def failures(trajectories: Sequence[Trajectory], n: int, with_tools: bool = False) -> str:
    """Up to `n` rollouts that did not get the full score, as text ('' when none)."""
    bad = [t for t in trajectories if t.outcome_reward is None or t.outcome_reward < 1.0]
    return "\n\n".join(trace_text(t, with_tools) for t in bad[:n])


def _slot_text(text: str) -> str:
    return text if text.strip() else "(empty)"


def user(text: str) -> list[Message]:
    return [Message("user", text)]


REPLY_FORMAT = "Reply with only the new text between <prompt> and </prompt>."


def paraphrase(text: str) -> list[Message]:
    return user("Rewrite this instruction for an AI assistant in different words, keeping "
                f"its meaning.\n\nInstruction:\n{_slot_text(text)}\n\n{REPLY_FORMAT}")


def textual_gradient(text: str, failed: str) -> list[Message]:
    return user(f"An AI assistant was given this instruction:\n{_slot_text(text)}\n\n"
                f"It failed on these examples:\n{failed}\n\nIn one or two sentences, say "
                "why the instruction led to these failures.")


def apply_gradient(text: str, gradient: str) -> list[Message]:
    return user(f"Instruction:\n{_slot_text(text)}\n\nWhat is wrong with it: "
                f"{clip(gradient, 400)}\n\nWrite an improved instruction that fixes this. "
                f"{REPLY_FORMAT}")


def meta_rewrite(text: str, scored: Sequence[tuple[str, float]], failed: str) -> list[Message]:
    table = "\n".join(f"score {s:.2f}: {clip(t, 200)}" for t, s in scored)
    return user("You improve instructions for an AI assistant.\n\nEarlier instructions and "
                f"their scores (higher is better):\n{table}\n\nCurrent instruction:\n"
                f"{_slot_text(text)}\n\nIt failed on:\n{failed or '(no failures shown)'}\n\n"
                f"Write a better instruction. {REPLY_FORMAT}")


def mutate(text: str, style: str) -> list[Message]:
    return user(f"{style}\n\nUse that way of thinking to improve this instruction for an AI "
                f"assistant:\n{_slot_text(text)}\n\n{REPLY_FORMAT}")


def critique(text: str, failed: str) -> list[Message]:
    return user(f"Instruction given to an AI assistant:\n{_slot_text(text)}\n\nExamples it "
                f"got wrong:\n{failed}\n\nCritique the instruction: what is missing, unclear "
                "or misleading? Be specific and brief.")


def refine(text: str, critique_text: str) -> list[Message]:
    return user(f"Instruction:\n{_slot_text(text)}\n\nCritique:\n{clip(critique_text, 400)}"
                f"\n\nRewrite the instruction so the critique no longer applies. {REPLY_FORMAT}")


def reflect(slot: str, text: str, traces: str) -> list[Message]:
    return user(f"You are improving the '{slot}' part of an AI agent's prompt.\n\nCurrent "
                f"text:\n{_slot_text(text)}\n\nRuns of the agent with this prompt (its turns, "
                f"tool calls, tool results, expected answers and scores):\n{traces}\n\nFind "
                "what went wrong and what worked, then write a new text for this part that "
                f"makes the agent succeed. {REPLY_FORMAT}")

"""Eval items built by hand: real Trajectories and EvalItems."""

from __future__ import annotations

from tracerl.evals.items import EvalItem
from tracerl.types import Message, Task, ToolCall, Trajectory, Turn


def make_trajectory(*turns: tuple[str, list[ToolCall]], answer: object = None,
                    task_id: str = "t") -> Trajectory:
    """One Turn per (text, calls); token ids are made up but consistent (3 per turn)."""
    built = [Turn(action_ids=[1, 2, 3], action_logprobs=[-1.0] * 3, action_text=text,
                  tool_calls=list(calls),
                  observations=[Message("tool", "ok", tool_call_id=c.id) for c in calls])
             for text, calls in turns]
    task = Task(task_id, (Message("user", "question"),), answer=answer)
    return Trajectory(task=task, prompt_ids=[7, 8], turns=built)


def item(text: str = "", *, calls: list[ToolCall] | None = None, **reference: object) -> EvalItem:
    """An item whose single turn says `text` (and makes `calls`)."""
    return EvalItem("i", make_trajectory((text, calls or [])), reference)


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, dict(arguments))

"""Eval items built by hand: real Trajectories and EvalItems.

Served as fixtures that return the builder (`make_trajectory`, `item`, `call`), so that no
test module imports another module of the test tree."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tracerl.evals.items import EvalItem
from tracerl.types import Message, Task, ToolCall, Trajectory, Turn


def _make_trajectory(*turns: tuple[str, list[ToolCall]], answer: object = None,
                     task_id: str = "t") -> Trajectory:
    """One Turn per (text, calls); token ids are made up but consistent (3 per turn)."""
    built = [Turn(action_ids=[1, 2, 3], action_logprobs=[-1.0] * 3, action_text=text,
                  tool_calls=list(calls),
                  observations=[Message("tool", "ok", tool_call_id=c.id) for c in calls])
             for text, calls in turns]
    task = Task(task_id, (Message("user", "question"),), answer=answer)
    return Trajectory(task=task, prompt_ids=[7, 8], turns=built)


def _item(text: str = "", *, calls: list[ToolCall] | None = None, **reference: object) -> EvalItem:
    """An item whose single turn says `text` (and makes `calls`)."""
    return EvalItem("i", _make_trajectory((text, calls or [])), reference)


def _call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, dict(arguments))


@pytest.fixture(scope="session")
def make_trajectory() -> Callable[..., Trajectory]:
    """`make_trajectory(*(text, calls), answer=None, task_id="t")`: one Turn per pair."""
    return _make_trajectory


@pytest.fixture(scope="session")
def item() -> Callable[..., EvalItem]:
    """`item(text="", calls=None, **reference)`: an EvalItem of one turn."""
    return _item


@pytest.fixture(scope="session")
def call() -> Callable[..., ToolCall]:
    """`call(name, **arguments)`: a ToolCall."""
    return _call

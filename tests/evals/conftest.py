"""Eval items built by hand: real Trajectories and EvalItems.

Served as fixtures that return the builder (`item`, `call`; `make_trajectory` is the
root conftest's), so that no test module imports another module of the test tree."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tracerl.evals.items import EvalItem
from tracerl.types import ToolCall, Trajectory


def _call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(name, dict(arguments))


@pytest.fixture(scope="session")
def item(make_trajectory: Callable[..., Trajectory]) -> Callable[..., EvalItem]:
    """`item(text="", calls=None, **reference)`: an EvalItem of one turn."""

    def build(text: str = "", *, calls: list[ToolCall] | None = None,
              **reference: object) -> EvalItem:
        return EvalItem("i", make_trajectory((text, calls or [])), reference)

    return build


@pytest.fixture(scope="session")
def call() -> Callable[..., ToolCall]:
    """`call(name, **arguments)`: a ToolCall."""
    return _call

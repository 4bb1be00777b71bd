"""Fixtures for the trace tests: hand-built trajectories, real Trajectory objects as the
rollout runner writes them.

The builder is served as a fixture that returns it (`build_trajectory`), so that no test
module imports another module of the test tree."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tracerl.types import Message, Status, Task, ToolCall, ToolResult, Trajectory, Turn

T0 = 1_700_000_000.0


def _build_trajectory(*, reward: float | None = 1.0, status: Status = Status.DONE,
                      sample: int = 0, group: int = 0, broken_tool: bool = True) -> Trajectory:
    """Two turns: a calculator call (and a failing lookup) then the final answer."""
    task = Task(
        id="math-7",
        messages=(Message("system", "You can call tools."), Message("user", "What is 6*7?")),
        answer="42",
        metadata={"family": "arith"},
    )
    calc = ToolCall("calculator", {"expr": "6*7"}, id="call_1")
    calls = [calc]
    results = [ToolResult(calc, "42", ok=True, started_at=T0 + 0.30, ended_at=T0 + 0.35)]
    if broken_tool:
        look = ToolCall("lookup", {"key": "x"}, id="call_2")
        calls.append(look)
        results.append(ToolResult(look, "error: no such key", ok=False, error="tool_raised",
                                  started_at=T0 + 0.35, ended_at=T0 + 0.40))
    turn0 = Turn(
        action_ids=[11, 12, 13], action_logprobs=[-0.1, -0.2, -0.3],
        action_text='<tool_call>{"name": "calculator"}</tool_call>',
        observation_ids=[90, 91],
        observations=[Message("tool", r.content, tool_call_id=r.call.id) for r in results],
        tool_calls=calls, tool_results=results, reward=0.5,
        started_at=T0 + 0.0, ended_at=T0 + 0.30,
    )
    turn1 = Turn(
        action_ids=[21, 22], action_logprobs=[-0.5, -0.6], action_text="The answer is 42.",
        started_at=T0 + 0.40, ended_at=T0 + 0.60,
    )
    return Trajectory(
        task=task, prompt_ids=[1, 2, 3, 4], turns=[turn0, turn1], status=status,
        outcome_reward=reward, reward_parts={"correct": reward, "format": None},
        advantages=[0.5, 0.5, 0.5, 0.0, 0.0, -0.5, -0.5], metrics={"num_tool_calls": 2.0},
        group_index=group, sample_index=sample, policy_version=3,
        error="sandbox down" if status is Status.ERROR else None,
    )


@pytest.fixture(scope="session")
def build_trajectory() -> Callable[..., Trajectory]:
    """`build_trajectory(reward=1.0, status=DONE, sample=0, group=0, broken_tool=True)`."""
    return _build_trajectory


@pytest.fixture(scope="session")
def t0() -> float:
    """The wall-clock time at which `build_trajectory`'s first turn starts."""
    return T0


@pytest.fixture
def trajectory() -> Trajectory:
    """`build_trajectory()` with its defaults, fresh for each test."""
    return _build_trajectory()

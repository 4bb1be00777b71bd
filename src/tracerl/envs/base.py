"""The Env protocol: an interactive episode with async, Gymnasium-worded methods.

    messages = await env.reset(task)          # the opening messages
    result = await env.step(action_text)      # observations, reward, terminated, truncated, info
    await env.close()

One Env instance serves one episode at a time; the rollout runner makes one per
trajectory through an EnvFactory, so envs may keep per-episode state.

An Env may also offer tools to describe to the policy: a `tool_schemas` attribute (read
after `reset`) holding OpenAI function-calling JSON schemas. The rollout renders them in
the model's own tool format (tracerl.rollout.render); an Env never formats them itself,
since the format belongs to the model's chat template.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from tracerl.types import Message, Task, ToolCall, ToolResult


@dataclass
class StepResult:
    """What the env answers to one action (Gymnasium's step tuple, named)."""

    observations: list[Message] = field(default_factory=list)
    """New messages for the policy (tool results, user replies), OpenAI format."""
    reward: float | None = None
    """Optional per-turn reward; the outcome reward comes from the Reward."""
    terminated: bool = False
    """The episode reached a natural end (a final answer)."""
    truncated: bool = False
    """The env cut the episode short (its own limit)."""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    """Free-form diagnostics; not read by training."""


def tool_schemas(env: object) -> list[dict[str, Any]]:
    """The tools `env` offers to describe to the policy (its `tool_schemas`, or none)."""
    return [dict(s) for s in getattr(env, "tool_schemas", None) or ()]


@runtime_checkable
class Env(Protocol):
    async def reset(self, task: Task) -> list[Message]: ...

    async def step(self, action_text: str) -> StepResult: ...

    async def close(self) -> None: ...


EnvFactory = Callable[[], Env]


class EnvCheckError(AssertionError):
    """An Env violates the protocol; the message lists every violation found."""


def _check_messages(where: str, messages: Any, problems: list[str]) -> None:
    if not isinstance(messages, list):
        problems.append(f"{where} must return a list of Message, got {type(messages).__name__}")
        return
    for i, m in enumerate(messages):
        if not isinstance(m, Message):
            problems.append(f"{where}[{i}] must be a tracerl.types.Message, got {type(m).__name__}")


def _check_step(i: int, result: Any, problems: list[str]) -> None:
    if not isinstance(result, StepResult):
        problems.append(f"step #{i} must return StepResult, got {type(result).__name__}")
        return
    _check_messages(f"step #{i}.observations", result.observations, problems)
    r = result.reward
    if r is not None and (not isinstance(r, int | float) or not math.isfinite(r)):
        problems.append(f"step #{i}.reward must be a finite float or None, got {r!r}")
    for name in ("terminated", "truncated"):
        if not isinstance(getattr(result, name), bool):
            problems.append(f"step #{i}.{name} must be bool")
    if len(result.tool_results) != len(result.tool_calls):
        problems.append(f"step #{i}: {len(result.tool_calls)} tool calls but "
                        f"{len(result.tool_results)} tool results")


async def check_env(factory: EnvFactory, task: Task, actions: list[str]) -> None:
    """Exercise an Env the way the runner does; raise EnvCheckError listing violations.

    Runs the scripted `actions` until the env ends the episode, then checks that a
    second reset with the same task gives the same opening messages (rollouts of a
    group must start from one state) and that close() works.
    """
    problems: list[str] = []
    env = factory()
    if not isinstance(env, Env):
        raise EnvCheckError("factory() did not return an Env (needs async reset/step/close)")
    first = await env.reset(task)
    _check_messages("reset", first, problems)
    if isinstance(first, list) and not first:
        problems.append("reset returned no messages: the policy would have no prompt")
    ended = False
    for i, action in enumerate(actions):
        result = await env.step(action)
        _check_step(i, result, problems)
        if isinstance(result, StepResult) and (result.terminated or result.truncated):
            ended = True
            break
    if actions and not ended:
        problems.append(f"episode did not end after {len(actions)} scripted actions")
    again = await env.reset(task)
    if again != first:
        problems.append("reset(task) is not deterministic: two resets gave different messages")
    await env.close()
    if problems:
        raise EnvCheckError("Env check failed:\n- " + "\n- ".join(problems))

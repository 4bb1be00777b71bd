import asyncio
import time

import pytest

from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig
from tracerl.tools.tool import tool
from tracerl.types import Message, Task

TASK = Task(id="t", messages=(Message("user", "go"),))


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def explode(x: str) -> str:
    """Always fails."""
    raise RuntimeError(f"cannot handle {x}")


@tool
async def hang(seconds: float) -> str:
    """Sleeps too long."""
    await asyncio.sleep(seconds)
    return "late"


def _step(action: str, timeout: float = 0.2):
    env = ToolEnv([add, explode, hang], ToolEnvConfig(tool_timeout_s=timeout))

    async def go():
        await env.reset(TASK)
        return await env.step(action)

    return asyncio.run(go())


def call(name: str, args: str) -> str:
    return f'<tool_call>{{"name": "{name}", "arguments": {args}}}</tool_call>'


def test_successful_call_returns_tool_message():
    r = _step(call("add", '{"a": 2, "b": 3}'))
    assert not r.terminated
    assert r.observations == [Message("tool", "5", tool_call_id="call_0", name="add")]
    assert r.tool_results[0].ok


def test_final_answer_terminates():
    r = _step("Answer: 5")
    assert r.terminated and not r.observations


@pytest.mark.parametrize("action,kind,text", [
    ('<tool_call>{"name": "add", "arguments": {a: 1}}</tool_call>', "malformed_call",
     "invalid JSON"),
    (call("mul", '{"a": 1}'), "unknown_tool", "available: add, explode, hang"),
    (call("add", '{"a": "2", "b": 3}'), "bad_arguments", "'a' must be integer"),
    (call("explode", '{"x": "y"}'), "tool_raised", "RuntimeError: cannot handle y"),
    (call("hang", '{"seconds": 5}'), "timeout", "timed out after 0.2s"),
])
def test_every_failure_is_an_error_observation(action, kind, text):
    t0 = time.perf_counter()
    r = _step(action)
    assert time.perf_counter() - t0 < 3
    assert not r.terminated
    (result,) = r.tool_results
    assert (result.ok, result.error) == (False, kind)
    assert r.observations[0].role == "tool"
    assert r.observations[0].content.startswith("Error: ") and text in r.observations[0].content


def test_calls_in_one_turn_run_concurrently():
    action = call("hang", '{"seconds": 0.3}') + call("hang", '{"seconds": 0.3}')
    t0 = time.perf_counter()
    r = _step(action, timeout=2.0)
    assert [o.content for o in r.observations] == ["late", "late"]
    assert time.perf_counter() - t0 < 0.55


def test_step_before_reset_is_an_error():
    with pytest.raises(RuntimeError, match="before reset"):
        asyncio.run(ToolEnv([add]).step("x"))


def test_duplicate_tool_names_rejected():
    with pytest.raises(ValueError, match="share a name"):
        ToolEnv([add, add])


def test_tools_are_offered_for_description_only_when_asked():
    assert ToolEnv([add]).tool_schemas == []
    env = ToolEnv([add, explode], ToolEnvConfig(describe_tools=True))
    assert env.tool_schemas == [add.schema, explode.schema]
    assert asyncio.run(env.reset(TASK)) == list(TASK.messages)  # the rollout renders them

import asyncio

from tracerl.guard import Guard, GuardConfig, Rule, ToolCallRules


def test_blocked_tool_never_executes_and_agent_sees_why():
    ran: list[str] = []
    out = Guard().guarded_call(lambda command: ran.append(command), "bash", {"command": "rm -rf /"})
    assert ran == []
    assert (out.result.ok, out.result.error) == (False, "blocked")
    assert "was not executed" in out.result.content and "destructive_command" in out.result.content


def test_allowed_tool_runs_and_its_output_is_returned():
    out = Guard().guarded_call(lambda command: f"ran {command}", "bash", {"command": "ls"})
    assert (out.result.ok, out.result.content) == (True, "ran ls")


def test_tool_output_is_checked_as_an_observation():
    out = Guard().guarded_call(lambda q: "key AKIA2E0A8F3B244C9986", "search", {"q": "keys"})
    assert out.result.content == "key [REDACTED:aws_access_key]"
    assert out.observation_decision is not None and out.observation_decision.triggered


def test_tool_receives_redacted_arguments():
    guard = Guard(GuardConfig(tool_call=ToolCallRules(pii=Rule("redact"))))
    seen: list[str] = []
    guard.guarded_call(lambda to: seen.append(to) or "sent", "mail", {"to": "maria@gmail.com"})
    assert seen == ["[REDACTED:email]"]


def test_tool_that_raises_is_contained():
    def boom(x: int) -> str:
        raise ValueError("bad x")

    out = Guard().guarded_call(boom, "boom", {"x": 1})
    assert (out.result.error, out.result.content) == (
        "tool_raised",
        "Tool 'boom' raised ValueError: bad x",
    )


def test_non_string_output_is_serialised_before_checking():
    out = Guard().guarded_call(lambda: {"ip": "8.8.8.8"}, "lookup", {})
    assert out.result.content == '{"ip": "[REDACTED:ip_address]"}'


def test_async_tool_is_awaited_and_blocked_one_never_starts():
    ran: list[str] = []

    async def tool(command: str) -> str:
        ran.append(command)
        return "ok"

    guard = Guard()
    ok = asyncio.run(guard.guarded_call_async(tool, "bash", {"command": "ls"}))
    blocked = asyncio.run(guard.guarded_call_async(tool, "bash", {"command": "mkfs.ext4 /dev/sda"}))
    assert ok.result.content == "ok" and blocked.result.error == "blocked" and ran == ["ls"]


def test_penalty_and_decisions_are_exposed_for_the_rollout():
    out = Guard().guarded_call(lambda command: "x", "bash", {"command": "rm -rf /"})
    assert out.penalty == 1.0 and len(out.decisions) == 1

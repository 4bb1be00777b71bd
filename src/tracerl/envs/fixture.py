"""`secret`: a fixture family whose reward is 1.0 only if the plumbing really works.

The `get_secret` tool returns a fresh random nonce on every call; the task asks the
agent to answer with it. The nonce cannot be guessed and appears nowhere but in that
tool result, so the reward reaches 1.0 only if the tool's output went into the
observation tokens the policy conditioned its next turn on. The reward also checks
that the nonce it reads from the trajectory was really issued by the tool, so a
runner that recorded a tool result it never fed back cannot pass either.
"""

from __future__ import annotations

import random
import re
import secrets
from dataclasses import dataclass, field

from tracerl.envs.family import Split
from tracerl.envs.registry import FamilyContext, register_family
from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig
from tracerl.guard.pipeline import Guard
from tracerl.tools.hermes import format_tool_call
from tracerl.tools.tool import Tool, tool
from tracerl.types import Message, Task, ToolCall, Trajectory

PROMPT = "Call get_secret, then reply with 'Answer: ' and the secret."


@dataclass
class SecretReward:
    issued: set[str]
    name: str = "secret_echo"

    def __call__(self, trajectory: Trajectory) -> float | None:
        results = [r.content for t in trajectory.turns for r in t.tool_results
                   if r.ok and r.call.name == "get_secret"]
        if not results:
            return 0.0
        secret = results[-1]
        if secret not in self.issued:
            return 0.0
        m = re.search(r"Answer:\s*(\S+)", trajectory.final_text)
        return float(m is not None and m.group(1).replace("<|im_end|>", "") == secret)


@dataclass
class SecretFamily:
    """Fixture family (see module docstring)."""

    name: str = "secret"
    issued: set[str] = field(default_factory=set)
    guard: Guard | None = None
    """Guardrails on every tool call and tool output (None = none)."""
    describe_tools: bool = False
    """Describe the tools to the policy in its prompt (pretrained models need it)."""

    def __post_init__(self) -> None:
        self.reward = SecretReward(self.issued)
        issued = self.issued

        @tool
        def get_secret() -> str:
            """Return this episode's secret."""
            value = secrets.token_hex(4)
            issued.add(value)
            return value

        self.tool: Tool = get_secret

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        return [Task(id=f"secret-{split}-{seed}-{i}", messages=(Message("user", PROMPT),))
                for i in range(n)]

    def make_env(self) -> ToolEnv:
        return ToolEnv([self.tool], ToolEnvConfig(guard=self.guard,
                                                  describe_tools=self.describe_tools))

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        value = self.tool.fn()
        call = ToolCall("get_secret", {}, id="call_0")
        return [Message("assistant", format_tool_call(call), tool_calls=(call,)),
                Message("tool", value, tool_call_id="call_0", name="get_secret"),
                Message("assistant", f"Answer: {value}")]


@dataclass(frozen=True)
class SecretConfig:
    """`task.secret.*`: the plumbing fixture has no knobs."""


@register_family("secret", SecretConfig)
def build_secret(section: SecretConfig, context: FamilyContext) -> SecretFamily:
    """Plumbing fixture: reward 1 only if the tool's fresh secret reaches the answer."""
    return SecretFamily(guard=context.guard, describe_tools=context.describe_tools)

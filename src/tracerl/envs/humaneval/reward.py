"""The HumanEval reward: the final reply, read as a completion, scored by `code_tests`.

The program is `prompt + completion` (tracerl.envs.humaneval.completion), the tests are
HumanEval's `check(candidate)` with the prompt's helpers as trusted setup
(HumanEvalProblem.hidden_tests). code_tests loads the program in the sandbox and runs
`check` in this process, so what HumanEval's own harness trusts (that the process that
ran the tests is the one reporting "passed", that nothing patched `check`) is not
trusted here: the audit (tracerl.envs.humaneval.hacks) pays none of those tricks.

One check, all or nothing: the score is 1.0 when `check` raises nothing, else 0.0; None
(unjudged) only when the sandbox itself failed. An episode that ends on a tool call
(truncated while still calling run_python) gave no answer and scores 0.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tracerl.envs.humaneval.completion import completion_of
from tracerl.envs.humaneval.hacks import humaneval_hacks
from tracerl.rewards.base import RewardResult
from tracerl.rewards.code import code_tests
from tracerl.rewards.hacks import Hack
from tracerl.sandbox import SandboxPool
from tracerl.types import Trajectory

DEFAULT_TIMEOUT_S = 3.0
"""HumanEval's own default (`evaluate_functional_correctness(timeout=3.0)`)."""


def score_reply(reply: str, prompt: str, tests: str, entry_point: str, *,
                timeout_s: float = DEFAULT_TIMEOUT_S, memory_mb: int = 1024,
                pool: SandboxPool | None = None) -> RewardResult:
    """One reply to one problem; `details["shape"]` says how the reply was read."""
    completion = completion_of(reply, entry_point)
    result = code_tests(prompt + completion.text, tests, entry_point=entry_point,
                        timeout_s=timeout_s, partial=False, memory_mb=memory_mb, pool=pool)
    return dataclasses.replace(result, details={**result.details, "shape": completion.shape})


@dataclass
class HumanEvalReward:
    """1.0 iff HumanEval's check passes on the final reply (None if the sandbox failed).

    Reads `task.metadata`: `tests` and `entry_point` (required) and `prompt` (the text
    the completion continues; '' for a task whose reply must be a whole program, as the
    reward-hack audit's tasks are).
    """

    timeout_s: float = DEFAULT_TIMEOUT_S
    """Limit of one call of the entry point (HumanEval's: 3 s for the whole check)."""
    pool: SandboxPool | None = None
    name: str = "humaneval"

    def result(self, trajectory: Trajectory) -> RewardResult:
        meta = trajectory.task.metadata
        tests, entry_point = meta.get("tests"), meta.get("entry_point")
        if not isinstance(tests, str) or not isinstance(entry_point, str):
            raise ValueError(f"task {trajectory.task.id!r}: the humaneval reward needs "
                             "metadata 'tests' (a code block) and 'entry_point'")
        if not trajectory.turns or trajectory.turns[-1].tool_calls:
            return RewardResult(0.0, "no_answer", 0, 1)
        return score_reply(trajectory.final_text, str(meta.get("prompt", "")), tests,
                           entry_point, timeout_s=self.timeout_s, pool=self.pool)

    def __call__(self, trajectory: Trajectory) -> float | None:
        return self.result(trajectory).score

    def hacks(self) -> tuple[Hack, ...]:
        """Hacks on HumanEval's own shape, run by `audit` after the library's."""
        return humaneval_hacks()

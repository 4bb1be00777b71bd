"""The code task's tools as plain typed functions, and its final reward.

The lead's ToolEnv derives each tool's JSON schema from the signature and docstring,
so the docstrings below are what the policy reads. One CodeTools instance serves
one episode: `run_python` is a scratch run in the sandbox, `submit` records the final
solution (and ends the episode), `reward()` scores the submission with code_tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from tracerl.rewards.base import RewardResult
from tracerl.rewards.code import code_tests
from tracerl.sandbox import SandboxPool, default_pool
from tracerl.types import Task

MAX_TOOL_OUTPUT = 4000


def format_run(status: str, stdout: str, stderr: str) -> str:
    """Tool output as the policy sees it: status, then (truncated) stdout and stderr."""
    out = f"status: {status}\n"
    if stdout:
        out += f"stdout:\n{stdout[:MAX_TOOL_OUTPUT]}\n"
    if stderr:
        out += f"stderr:\n{stderr[-MAX_TOOL_OUTPUT:]}\n"
    return out


@dataclass
class CodeTools:
    """Tools for one code-task episode, bound to its Task and a sandbox pool."""

    task: Task
    pool: SandboxPool | None = None
    timeout_s: float = 5.0
    submission: str | None = None

    def run_python(self, code: str) -> str:
        """Run Python code in a sandbox (no network, no files kept) and return its output.

        Args:
            code: a complete Python script; print what you want to see.
        """
        res = (self.pool or default_pool()).run_python(code, timeout_s=self.timeout_s)
        if res.status == "infra_error":
            return f"status: sandbox unavailable ({res.error}); try again"
        return format_run(res.status, res.stdout, res.stderr)

    def submit(self, code: str) -> str:
        """Submit your final solution; it is graded on hidden tests and the episode ends.

        Args:
            code: the complete solution source code.
        """
        if not isinstance(code, str) or not code.strip():
            return "error: submit needs the solution source code"
        self.submission = code
        return "submitted"

    def reward(self) -> RewardResult:
        """code_tests on the submission; 0 (status no_submission) when nothing was submitted."""
        if self.submission is None:
            return RewardResult(0.0, "no_submission")
        meta = self.task.metadata
        return code_tests(self.submission, meta["tests"], timeout_s=self.timeout_s,
                          entry_point=meta.get("entry_point"), pool=self.pool)

"""A HumanEval problem as a Task, and the oracle's answer to it.

The user message holds HumanEval's prompt (imports, signature, docstring) in a fenced
block after one line of instructions; the tests go to `Task.metadata` only, which the
policy never reads and the sandbox never receives.
"""

from __future__ import annotations

from tracerl.envs.humaneval.data import HumanEvalProblem
from tracerl.types import Message, Task

INSTRUCTIONS = ("Complete the Python function below. Reply with the complete function in "
                "a ```python code block.")
AGENTIC = ("You may first call run_python(code) to run Python code in a sandbox (your "
           "own tests, prints) and read its output. Your final answer is a message "
           "without a tool call.")


def problem_task(problem: HumanEvalProblem, agentic: bool) -> Task:
    """The Task of one problem: the prompt in the message, the tests only in metadata."""
    head = INSTRUCTIONS + (" " + AGENTIC if agentic else "")
    text = f"{head}\n\n```python\n{problem.prompt.strip()}\n```"
    return Task(id=problem.task_id, messages=(Message("user", text),),
                metadata={"prompt": problem.prompt, "tests": problem.hidden_tests,
                          "entry_point": problem.entry_point, "source": "humaneval"})


def answer_message(problem: HumanEvalProblem) -> Message:
    """The oracle's final answer: the stub without its docstring and the canonical body,
    fenced (the prompt's imports and helpers stay in scope)."""
    return Message("assistant", f"```python\n{problem.stub.rstrip()}\n"
                                f"{problem.canonical_solution.rstrip()}\n```")

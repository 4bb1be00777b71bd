"""The code task family: problems with hidden tests, a seeded TaskSet, tools, reward."""

from tracerl.envs.code.problems import (
    BUILTIN_PATH,
    CodeProblem,
    load_humaneval,
    load_mbpp,
    load_problems,
)
from tracerl.envs.code.taskset import CodeTaskSet, problem_task
from tracerl.envs.code.tools import CodeTools

__all__ = [
    "BUILTIN_PATH",
    "CodeProblem",
    "CodeTaskSet",
    "CodeTools",
    "load_humaneval",
    "load_mbpp",
    "load_problems",
    "problem_task",
]

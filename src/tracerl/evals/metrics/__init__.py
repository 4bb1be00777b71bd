"""Local metrics (no network): tool use, answers, overlap, cost, completion."""

from tracerl.evals.metrics.overlap import Bleu, EditDistance, RougeL, bleu, levenshtein, rouge_l
from tracerl.evals.metrics.text import (
    Contains,
    ExactMatch,
    JsonSchemaMatch,
    JsonValid,
    NumericMatch,
    RegexMatch,
)
from tracerl.evals.metrics.tools import (
    LoopDetection,
    StepEfficiency,
    ToolCallValidity,
    ToolSelection,
    TrajectoryMatch,
)
from tracerl.evals.metrics.usage import Latency, TaskCompletion, TokenCount

__all__ = [
    "Bleu", "Contains", "EditDistance", "ExactMatch", "JsonSchemaMatch", "JsonValid", "Latency",
    "LoopDetection", "NumericMatch", "RegexMatch", "RougeL", "StepEfficiency", "TaskCompletion",
    "TokenCount", "ToolCallValidity", "ToolSelection", "TrajectoryMatch", "bleu", "levenshtein",
    "rouge_l",
]

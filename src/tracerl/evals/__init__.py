"""Evals: `evaluate()`, metrics, trajectory match and judges, all usable as Rewards."""

from tracerl.evals.catalogue import CATALOGUE
from tracerl.evals.compare import Comparison, MetricComparison, compare
from tracerl.evals.evaluate import EvalReport, Failure, ItemResult, MetricSummary, evaluate
from tracerl.evals.fault import Unjudged
from tracerl.evals.items import (
    EvalItem,
    item_from_text,
    item_from_trajectory,
    read_jsonl,
    read_trace_store,
)
from tracerl.evals.judges import GroupJudge, GroupJudgement, JudgeConfig, RubricJudge
from tracerl.evals.match import MatchResult, trajectory_match
from tracerl.evals.metric import Metric, MetricResult, MetricReward, as_reward, score
from tracerl.evals.metrics import *  # noqa: F403 - the metric classes are public API
from tracerl.evals.metrics import __all__ as _metrics_all

__all__ = [
    "CATALOGUE", "Comparison", "MetricComparison", "Unjudged", "compare", "item_from_text",
    "score", "EvalItem", "EvalReport", "Failure", "GroupJudge", "GroupJudgement", "ItemResult",
    "JudgeConfig", "MatchResult", "Metric", "MetricReward", "MetricResult", "MetricSummary",
    "RubricJudge", "as_reward", "evaluate", "item_from_trajectory", "read_jsonl",
    "read_trace_store", "trajectory_match", *_metrics_all,
]

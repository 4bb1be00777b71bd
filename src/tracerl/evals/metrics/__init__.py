"""Local metrics (no network), by family: strings, structured output, similarity,
retrieval, tool use, code, usage, and model-based ones behind optional extras.
The catalogue (tracerl.evals.catalogue, `tracerl metrics`) lists them by name."""

from tracerl.evals.metrics.agent import ActionSafety, StepBudget, ToolCallCredit, ToolSuccess
from tracerl.evals.metrics.code import BannedCode, CodeTests, PythonSyntax
from tracerl.evals.metrics.models import AnswerRelevance, Profanity, SemanticSimilarity
from tracerl.evals.metrics.overlap import Bleu, EditDistance, RougeL, bleu, levenshtein, rouge_l
from tracerl.evals.metrics.retrieval import (
    MRR,
    NDCG,
    CitationPresence,
    CitationValidity,
    PrecisionAtK,
    RecallAtK,
)
from tracerl.evals.metrics.similarity import ChrF, NumericCloseness, RougeN, SetF1, chrf
from tracerl.evals.metrics.strings import (
    ContainsAll,
    ContainsAny,
    ContainsEmail,
    ContainsNone,
    ContainsUrl,
    EndsWith,
    LengthBounds,
    OneLine,
    StartsWith,
)
from tracerl.evals.metrics.structured import (
    JsonFieldMatch,
    JsonInText,
    JsonTreeSimilarity,
    SchemaCompliance,
)
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
    "MRR", "NDCG", "ActionSafety", "AnswerRelevance", "BannedCode", "Bleu", "ChrF",
    "CitationPresence", "CitationValidity", "CodeTests", "Contains", "ContainsAll",
    "ContainsAny", "ContainsEmail", "ContainsNone", "ContainsUrl", "EditDistance", "EndsWith",
    "ExactMatch", "JsonFieldMatch", "JsonInText", "JsonSchemaMatch", "JsonTreeSimilarity",
    "JsonValid", "Latency", "LengthBounds", "LoopDetection", "NumericCloseness", "NumericMatch",
    "OneLine", "PrecisionAtK", "Profanity", "PythonSyntax", "RecallAtK", "RegexMatch", "RougeL",
    "RougeN", "SchemaCompliance", "SemanticSimilarity", "SetF1", "StartsWith", "StepBudget",
    "StepEfficiency", "TaskCompletion", "TokenCount", "ToolCallCredit", "ToolCallValidity",
    "ToolSelection", "ToolSuccess", "TrajectoryMatch", "bleu", "chrf", "levenshtein", "rouge_l",
]

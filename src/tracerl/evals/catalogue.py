"""The catalogue of local metrics: every Metric the library ships, by name, with what
it reads and what it returns. `tracerl metrics` prints it; `tracerl eval --metric NAME`
builds from it; docs/evals.md maps it against other catalogues.

Every score is "higher is better" in [0, 1] except the measurements (latency, tokens).
Every metric is a Metric, so `as_reward(metric)` makes it a trajectory Reward and
`as_reward(metric).per_turn` a per-turn one.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from tracerl.evals.metric import Metric
from tracerl.evals.metrics import (
    MRR,
    NDCG,
    ActionSafety,
    AnswerRelevance,
    BannedCode,
    Bleu,
    ChrF,
    CitationPresence,
    CitationValidity,
    CodeTests,
    Contains,
    ContainsAll,
    ContainsAny,
    ContainsEmail,
    ContainsNone,
    ContainsUrl,
    EditDistance,
    EndsWith,
    ExactMatch,
    JsonFieldMatch,
    JsonInText,
    JsonSchemaMatch,
    JsonTreeSimilarity,
    JsonValid,
    Latency,
    LengthBounds,
    LoopDetection,
    NumericCloseness,
    NumericMatch,
    OneLine,
    PrecisionAtK,
    Profanity,
    PythonSyntax,
    RecallAtK,
    RegexMatch,
    RougeL,
    RougeN,
    SchemaCompliance,
    SemanticSimilarity,
    SetF1,
    StartsWith,
    StepBudget,
    StepEfficiency,
    TokenCount,
    ToolCallCredit,
    ToolCallValidity,
    ToolSelection,
    ToolSuccess,
    TrajectoryMatch,
)

Kind = Literal["deterministic", "measurement", "sandbox", "model"]
UNIT = "[0, 1]"


@dataclass(frozen=True)
class Entry:
    """One metric of the catalogue."""

    name: str
    build: Callable[..., Metric]
    """Called with the metric's options (`tracerl eval --metric name:key=value`)."""
    family: str
    inputs: str
    """What it reads: the answer, the tool calls, reference fields, options."""
    range: str = UNIT
    kind: Kind = "deterministic"
    """deterministic (pure and fast), measurement (not a score), sandbox (runs code),
    model (an optional extra's model)."""
    reference: tuple[str, ...] = ()
    """Reference fields it may read; a metric with none has no data-side fault."""
    extra: str = ""
    """The pip extra a model metric needs."""


E = Entry  # a table reads better with a short constructor
_ANSWER = ("answer",)


STRINGS: tuple[Entry, ...] = (
    E("exact_match", ExactMatch, "strings",
      "answer (casefolded); reference answer; prefix= a label to drop (Answer:)",
      reference=_ANSWER),
    E("contains", Contains, "strings", "answer; substring= or reference answer",
      reference=_ANSWER),
    E("regex_match", RegexMatch, "strings", "answer; pattern= (required)"),
    E("contains_all", ContainsAll, "strings",
      "answer; phrases= or reference required_phrases", reference=("required_phrases",)),
    E("contains_any", ContainsAny, "strings", "answer; phrases= or reference any_phrases",
      reference=("any_phrases",)),
    E("contains_none", ContainsNone, "strings",
      "answer; phrases= or reference forbidden_phrases",
      reference=("forbidden_phrases",)),
    E("length", LengthBounds, "strings",
      "answer length in chars, words or tokens; min_len=, max_len=, unit="),
    E("one_line", OneLine, "strings", "answer"),
    E("starts_with", StartsWith, "strings", "answer; affix= or reference prefix",
      reference=("prefix",)),
    E("ends_with", EndsWith, "strings", "answer; affix= or reference suffix",
      reference=("suffix",)),
    E("contains_email", ContainsEmail, "strings", "answer; present=, whole="),
    E("contains_url", ContainsUrl, "strings", "answer; present=, whole="),
)
"""The catalogue's strings metrics."""


STRUCTURED: tuple[Entry, ...] = (
    E("json_valid", JsonValid, "structured", "answer (whole or fenced JSON)"),
    E("json_in_text", JsonInText, "structured", "answer (JSON anywhere in prose)"),
    E("json_schema", JsonSchemaMatch, "structured", "answer JSON; schema= (required)"),
    E("schema_compliance", SchemaCompliance, "structured",
      "answer JSON; schema= or reference schema (partial credit)", reference=("schema",)),
    E("json_field_match", JsonFieldMatch, "structured",
      "answer JSON; reference expected_json (per field)", reference=("expected_json",)),
    E("json_tree_similarity", JsonTreeSimilarity, "structured",
      "answer JSON; reference expected_json (tree edit distance)",
      reference=("expected_json",)),
)
"""The catalogue's structured output metrics."""


SIMILARITY: tuple[Entry, ...] = (
    E("bleu", Bleu, "similarity", "answer; reference answer (text or list)", reference=_ANSWER),
    E("rouge_1", functools.partial(RougeN, 1), "similarity", "answer; reference answer",
      reference=_ANSWER),
    E("rouge_2", functools.partial(RougeN, 2), "similarity", "answer; reference answer",
      reference=_ANSWER),
    E("rouge_l", RougeL, "similarity", "answer; reference answer", reference=_ANSWER),
    E("chrf", ChrF, "similarity", "answer; reference answer", reference=_ANSWER),
    E("edit_similarity", EditDistance, "similarity", "answer; reference answer",
      reference=_ANSWER),
    E("set_f1", functools.partial(SetF1, "f1"), "similarity",
      "answer list; reference answer list", reference=_ANSWER),
    E("set_precision", functools.partial(SetF1, "precision"), "similarity",
      "answer list; reference answer list", reference=_ANSWER),
    E("set_recall", functools.partial(SetF1, "recall"), "similarity",
      "answer list; reference answer list", reference=_ANSWER),
    E("numeric_match", NumericMatch, "similarity", "answer's last number; reference answer",
      reference=_ANSWER),
    E("numeric_closeness", NumericCloseness, "similarity",
      "answer's last number; reference answer; rel_tol=", reference=_ANSWER),
)
"""The catalogue's similarity metrics."""


RETRIEVAL: tuple[Entry, ...] = (
    *(E(n, cls, "retrieval", "reference retrieved_ids (or the answer's list) and "
        "relevant_ids; k=", reference=("retrieved_ids", "relevant_ids"))
      for n, cls in (("precision_at_k", PrecisionAtK), ("recall_at_k", RecallAtK),
                     ("mrr", MRR), ("ndcg", NDCG))),
    E("citation_presence", CitationPresence, "retrieval", "answer's [citations]"),
    E("citation_validity", CitationValidity, "retrieval",
      "answer's [citations]; reference retrieved_ids", reference=("retrieved_ids",)),
)
"""The catalogue's retrieval and search agents metrics."""


TOOLS: tuple[Entry, ...] = (
    E("tool_selection", ToolSelection, "tools", "tool calls; required=, forbidden="),
    E("tool_call_validity", ToolCallValidity, "tools",
      "tool calls; schemas= (required: tool specs)"),
    E("tool_success", ToolSuccess, "tools", "tool results or tool messages (1 - error rate)"),
    E("tool_call_credit", ToolCallCredit, "tools",
      "tool calls; reference reference_messages (per-call argument credit)",
      reference=("reference_messages",)),
    E("step_efficiency", StepEfficiency, "tools", "tool calls (repeated identical calls)"),
    E("step_budget", StepBudget, "tools", "turns or calls; max_steps= or reference "
      "max_steps", reference=("max_steps",)),
    E("no_loop", LoopDetection, "tools", "turns (a block repeated back to back)"),
    E("trajectory_match", TrajectoryMatch, "tools",
      "tool calls; reference reference_messages; mode=, args=",
      reference=("reference_messages",)),
    E("action_safety", ActionSafety, "tools",
      "tool-call arguments (guard scanners: destructive code, secrets, PII)"),
)
"""The catalogue's tool use and trajectories metrics."""


CODE: tuple[Entry, ...] = (
    E("code_syntax", PythonSyntax, "code", "answer's Python code"),
    E("banned_code", BannedCode, "code", "answer's Python code; imports=, calls="),
    E("code_tests", CodeTests, "code", "answer's code; reference tests, entry_point",
      kind="sandbox", reference=("tests",)),
)
"""The catalogue's code metrics."""


MEASUREMENTS: tuple[Entry, ...] = (
    E("latency_s", Latency, "usage", "turn timestamps or reference latency_s",
      range="seconds >= 0", kind="measurement"),
    E("tokens", TokenCount, "usage", "token ids or reference usage; kind=",
      range="tokens >= 0", kind="measurement"),
)
"""The catalogue's measurements metrics."""


MODELS: tuple[Entry, ...] = (
    E("semantic_similarity", SemanticSimilarity, "models",
      "answer; reference answer (WordLlama embeddings)", kind="model", reference=_ANSWER,
      extra="semantic"),
    E("answer_relevance", AnswerRelevance, "models",
      "answer; reference question or the user message (WordLlama)", kind="model",
      extra="semantic"),
    E("profanity_free", Profanity, "models", "answer (alt-profanity-check)",
      kind="model", extra="profanity"),
)
"""The catalogue's model-based (optional extras) metrics."""


CATALOGUE: tuple[Entry, ...] = (
    *STRINGS, *STRUCTURED, *SIMILARITY, *RETRIEVAL, *TOOLS, *CODE, *MEASUREMENTS, *MODELS)


BY_NAME: dict[str, Entry] = {e.name: e for e in CATALOGUE}


def build(name: str, **options: Any) -> Metric:
    """The catalogue's metric `name` with `options`; unknown names and options are
    ValueErrors naming what is wrong."""
    if name not in BY_NAME:
        raise ValueError(f"unknown metric {name!r}; `tracerl metrics` lists them")
    entry = BY_NAME[name]
    missing = _required(entry.build) - set(options)
    if missing:
        given = ",".join(f"{k}=..." for k in sorted(missing))
        raise ValueError(f"metric {name!r} needs the option {', '.join(sorted(missing))}: "
                         f"--metric {name}:{given} (a value @file.json is read from that "
                         f"file; its inputs: {entry.inputs})")
    try:
        return entry.build(**options)
    except TypeError as exc:
        raise ValueError(f"metric {name!r}: {exc}") from exc


def _required(build: Callable[..., Any]) -> set[str]:
    """The options a metric cannot be built without (its parameters with no default)."""
    try:
        params = inspect.signature(build).parameters.values()
    except (TypeError, ValueError):
        return set()
    return {p.name for p in params if p.default is p.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}

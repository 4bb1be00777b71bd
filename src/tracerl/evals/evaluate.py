"""`evaluate(metrics, data)`: score every item with every metric, locally.

A metric that raises on an item is a failure of that (item, metric) cell: recorded in
`EvalReport.failures` with its error, counted in the aggregate, and never a crash
of the evaluation (one bad item must not cost the other results).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tracerl.evals.items import EvalItem, load_items
from tracerl.evals.metric import Metric, score
from tracerl.util.table import format_table


@dataclass(frozen=True)
class ItemResult:
    id: str
    scores: Mapping[str, float | None]
    passed: Mapping[str, bool | None]
    details: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Failure:
    item_id: str
    metric: str
    error: str
    """"ExceptionType: message"."""


@dataclass(frozen=True)
class MetricSummary:
    name: str
    mean: float | None
    """Mean over scored items (None when no item was scored)."""
    std: float | None
    scored: int
    unjudged: int
    """Items for which the metric returned None (not applicable / not judged)."""
    failed: int
    pass_rate: float | None
    """Share of items with passed=True among those that report pass/fail."""


@dataclass(frozen=True)
class EvalReport:
    items: tuple[ItemResult, ...]
    aggregates: Mapping[str, MetricSummary]
    failures: tuple[Failure, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"aggregates": {k: asdict(v) for k, v in self.aggregates.items()},
                "failures": [asdict(f) for f in self.failures],
                "items": [asdict(i) for i in self.items]}

    def table(self) -> str:
        """A readable summary: one row per metric."""
        headers = ["metric", "mean", "std", "pass_rate", "scored", "unjudged", "failed"]
        rows = [[s.name, s.mean, s.std, s.pass_rate, s.scored, s.unjudged, s.failed]
                for s in self.aggregates.values()]
        text = format_table(headers, rows)
        if self.failures:
            text += f"\n\n{len(self.failures)} failures, first: {self.failures[0].item_id} " \
                    f"{self.failures[0].metric}: {self.failures[0].error}"
        return text


def _summary(name: str, results: Sequence[ItemResult]) -> MetricSummary:
    values = [v for r in results if (v := r.scores.get(name)) is not None]
    verdicts = [p for r in results if (p := r.passed.get(name)) is not None]
    failed = sum(1 for r in results if name in r.errors)
    mean = sum(values) / len(values) if values else None
    std = (math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
           if mean is not None else None)
    return MetricSummary(
        name=name, mean=mean, std=std, scored=len(values),
        unjudged=len(results) - len(values) - failed, failed=failed,
        pass_rate=sum(verdicts) / len(verdicts) if verdicts else None,
    )


def _score_item(metrics: Sequence[Metric], item: EvalItem) -> ItemResult:
    scores: dict[str, float | None] = {}
    passed: dict[str, bool | None] = {}
    details: dict[str, Mapping[str, Any]] = {}
    errors: dict[str, str] = {}
    for metric in metrics:
        try:
            result = score(metric, item)
        except Exception as exc:  # noqa: BLE001 - one failing cell is counted, see module doc
            errors[metric.name] = f"{type(exc).__name__}: {exc}"
            scores[metric.name], passed[metric.name] = None, None
            continue
        scores[metric.name], passed[metric.name] = result.score, result.passed
        if result.details:
            details[metric.name] = dict(result.details)
    return ItemResult(item.id, scores, passed, details, errors)


def _check_metrics(metrics: Sequence[Metric]) -> None:
    if not metrics:
        raise ValueError("evaluate needs at least one metric")
    names: list[str] = [getattr(m, "name", "") for m in metrics]
    for m, n in zip(metrics, names, strict=True):
        if not isinstance(n, str) or not n or not callable(m):
            raise TypeError(f"{m!r} is not a Metric (needs a str `name` and __call__(item))")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"metric names must be unique, repeated: {dupes}")


def evaluate(metrics: Sequence[Metric], data: Any, *, run: str | None = None) -> EvalReport:
    """Score `data` with `metrics`.

    `data`: a list of Trajectories or EvalItems, a path to a JSONL file of OpenAI-format
    conversations (`{"messages": [...], ...reference fields}`), or a trace store (a
    `.sqlite` file or a run directory; `run` picks one run in it).
    """
    _check_metrics(metrics)
    items = load_items(data, run)
    results = tuple(_score_item(metrics, item) for item in items)
    failures = tuple(Failure(r.id, name, err) for r in results for name, err in r.errors.items())
    aggregates = {m.name: _summary(m.name, results) for m in metrics}
    return EvalReport(results, aggregates, failures)

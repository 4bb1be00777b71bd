"""`evaluate(metrics, data)`: score every item with every metric, locally.

A metric that raises on an item is a failure of that (item, metric) cell: recorded in
`EvalReport.failures` with its error, counted in the aggregate, and never a crash
of the evaluation (one bad item must not cost the other results). An item whose data
cannot judge it (fault.py) is unjudged: a None score, counted by reason.

`report.by("task")` / `report.by("tag")` break the aggregates down per group, and
`compare(before, after)` (compare.py) tests a change item by item.
"""

from __future__ import annotations

import gc
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from tracerl.evals.items import EvalItem, load_items
from tracerl.evals.metric import UNJUDGED, Metric, score
from tracerl.util.table import format_table

GroupKey = Literal["task", "tag"]
GROUP_KEYS: tuple[str, ...] = ("task", "tag")


@dataclass(frozen=True)
class ItemResult:
    id: str
    scores: Mapping[str, float | None]
    passed: Mapping[str, bool | None]
    details: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)
    task: str = ""
    tags: tuple[str, ...] = ()

    def groups(self, key: GroupKey) -> tuple[str, ...]:
        """The groups this item belongs to under `key` (one task, any number of tags)."""
        return (self.task,) if key == "task" else self.tags


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
    unjudged_reasons: Mapping[str, int] = field(default_factory=dict)
    """How many items were unjudged for each reason the metric gave."""


@dataclass(frozen=True)
class EvalReport:
    items: tuple[ItemResult, ...]
    aggregates: Mapping[str, MetricSummary]
    failures: tuple[Failure, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"aggregates": {k: asdict(v) for k, v in self.aggregates.items()},
                "failures": [asdict(f) for f in self.failures],
                "items": [asdict(i) for i in self.items]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalReport:
        """The report `to_dict()` wrote (e.g. `tracerl eval --out`), to compare against."""
        try:
            items = tuple(ItemResult(**{**i, "tags": tuple(i.get("tags", ()))})
                          for i in data["items"])
            aggregates = {k: MetricSummary(**v) for k, v in data["aggregates"].items()}
            failures = tuple(Failure(**f) for f in data.get("failures", ()))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not an evaluate() report: {exc}") from exc
        return cls(items, aggregates, failures)

    def by(self, key: GroupKey) -> dict[str, dict[str, MetricSummary]]:
        """{group: {metric: summary}} over the items of each task or tag."""
        if key not in GROUP_KEYS:
            raise ValueError(f"group by one of {GROUP_KEYS}, got {key!r}")
        members: dict[str, list[ItemResult]] = {}
        for r in self.items:
            for g in r.groups(key):
                members.setdefault(g, []).append(r)
        return {g: {m: _summary(m, rs) for m in self.aggregates} for g, rs in members.items()}

    def table(self, by: GroupKey | None = None) -> str:
        """A readable summary: one row per metric, or per (group, metric) with `by`."""
        headers = ["metric", "mean", "std", "pass_rate", "scored", "unjudged", "failed"]
        if by is None:
            rows = [_row(s) for s in self.aggregates.values()]
        else:
            headers.insert(0, by)
            rows = [[g, *_row(s)] for g, sums in sorted(self.by(by).items())
                    for s in sums.values()]
        text = format_table(headers, rows)
        reasons = [f"  {s.name}: {n} x {why}" for s in self.aggregates.values()
                   for why, n in s.unjudged_reasons.items()]
        if reasons:
            text += "\n\nunjudged (the data could not judge these items):\n" + "\n".join(reasons)
        if self.failures:
            text += f"\n\n{len(self.failures)} failures, first: {self.failures[0].item_id} " \
                    f"{self.failures[0].metric}: {self.failures[0].error}"
        return text


def _row(s: MetricSummary) -> list[Any]:
    return [s.name, s.mean, s.std, s.pass_rate, s.scored, s.unjudged, s.failed]


def _summary(name: str, results: Sequence[ItemResult]) -> MetricSummary:
    values: list[float] = []
    verdicts: list[bool] = []
    failed = 0
    reasons: Counter[str] = Counter()
    for r in results:  # one pass per metric: a report has items x metrics cells
        v = r.scores.get(name)
        if v is not None:
            values.append(v)
        elif name in r.errors:
            failed += 1
        else:
            reasons[str(r.details.get(name, {}).get(UNJUDGED, "no reason given"))] += 1
        p = r.passed.get(name)
        if p is not None:
            verdicts.append(p)
    mean = sum(values) / len(values) if values else None
    std = (math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
           if mean is not None else None)
    return MetricSummary(
        name=name, mean=mean, std=std, scored=len(values),
        unjudged=len(results) - len(values) - failed, failed=failed,
        pass_rate=sum(verdicts) / len(verdicts) if verdicts else None,
        unjudged_reasons=dict(reasons),
    )


def _score_item(metrics: Sequence[Metric], item: EvalItem) -> ItemResult:
    scores: dict[str, float | None] = {}
    passed: dict[str, bool | None] = {}
    details: dict[str, Mapping[str, Any]] = {}
    errors: dict[str, str] = {}
    for metric in metrics:
        name = metric.name
        try:
            result = score(metric, item)
        except Exception as exc:  # noqa: BLE001 - one failing cell is counted, see module doc
            errors[name] = f"{type(exc).__name__}: {exc}"
            scores[name] = passed[name] = None
            continue
        scores[name], passed[name] = result.score, result.passed
        if result.details:
            details[name] = dict(result.details)
    return ItemResult(item.id, scores, passed, details, errors, item.task_id, item.tags())


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
    with _ScoringHeap() as heap:
        scored = []
        for item in items:
            scored.append(_score_item(metrics, item))
            heap.scored_one()
        results = tuple(scored)
        failures = tuple(Failure(r.id, name, err) for r in results
                         for name, err in r.errors.items())
        aggregates = {m.name: _summary(m.name, results) for m in metrics}
    return EvalReport(results, aggregates, failures)


class _ScoringHeap:
    """While scoring, the cyclic garbage collector looks only at recent objects.

    What existed before (the items, the caller's heap: a training process holds
    millions of objects) is moved to the permanent generation (`gc.freeze`), and so is
    each chunk of results once the chunk's own garbage has been collected (`gc.collect`
    then `gc.freeze` every `CHUNK` items, which scans only that chunk); at the end, even
    on an error, everything is unfrozen (`gc.unfreeze`). Without this every full pass
    of the collector walks the whole heap and the results so far: about 10% of
    evaluating the catalogue. Garbage made while scoring is still collected; an object
    frozen earlier that becomes garbage waits until the end. Left alone when the
    collector is off or a caller has frozen objects already (unfreezing would undo
    theirs)."""

    CHUNK = 256

    def __enter__(self) -> _ScoringHeap:
        self.active = gc.isenabled() and not gc.get_freeze_count()
        self.count = 0
        if self.active:
            gc.freeze()
        return self

    def scored_one(self) -> None:
        self.count += 1
        if self.active and self.count % self.CHUNK == 0:
            gc.collect()
            gc.freeze()

    def __exit__(self, *exc: object) -> None:
        if self.active:
            gc.unfreeze()

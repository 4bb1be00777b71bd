"""Retrieval and search agents: precision@k, recall@k, MRR and nDCG over retrieved ids,
citation presence, and citation validity against the retrieved set.

The ranking is the reference field `retrieved_ids` (what a RAG pipeline logged), or
with `retrieved_key=None` the ranked list the answer itself gives (a JSON array or one
id per line / comma). Relevance is the reference field `relevant_ids`: a list of ids
(relevance 1) or an {id: graded relevance} object. No relevant ids, or a missing
or malformed list, is the data's fault (Unjudged); an answer that lists nothing
retrieved nothing and scores 0.

A ranking that repeats an id gains from it once: the repeat keeps its rank (it took a
slot) but counts as not relevant, so precision@k and DCG cannot be inflated by
retrieving the one relevant document k times.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from tracerl.evals.fault import malformed_reference
from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult
from tracerl.evals.metrics.structured import answer_json_or_none

RankScore = Literal["precision", "recall"]
_CITATION = re.compile(r"\[([^\[\]\n]{1,80})\](?!\()")  # [1], [doc-3], [1, 2]; not [text](url)
_LINE_SPLIT = re.compile(r"[\n,;]")


def first_occurrences(ranked: Sequence[str]) -> list[str | None]:
    """The ranking with each repeat replaced by None (it keeps its slot, gains nothing)."""
    seen: set[str] = set()
    out: list[str | None] = []
    for doc in ranked:
        out.append(None if doc in seen else doc)
        seen.add(doc)
    return out


def precision_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Relevant documents among the first k slots, over k (missing slots count as misses)."""
    top = first_occurrences(ranked)[:k]
    return sum(1 for d in top if d is not None and relevant.get(d, 0) > 0) / k


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Share of the relevant documents found in the first k slots."""
    wanted = {d for d, rel in relevant.items() if rel > 0}
    return len(wanted & {d for d in ranked[:k]}) / len(wanted)


def reciprocal_rank(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """1 / rank of the first relevant document in the first k (0 when there is none)."""
    for rank, d in enumerate(ranked[:k], start=1):
        if relevant.get(d, 0) > 0:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """nDCG@k (Jarvelin & Kekalainen, 2002) with linear gain: sum rel_i / log2(i + 1)
    over the first k slots, over the same sum for the ideal ranking."""
    top = first_occurrences(ranked)[:k]
    dcg = sum(relevant.get(d, 0.0) / math.log2(i + 2) for i, d in enumerate(top) if d)
    ideal = sorted((r for r in relevant.values() if r > 0), reverse=True)[:k]
    return dcg / sum(r / math.log2(i + 2) for i, r in enumerate(ideal))


def relevance(item: EvalItem, key: str) -> dict[str, float]:
    raw = item.require(key)
    if isinstance(raw, Mapping):
        try:
            rel = {str(d): float(r) for d, r in raw.items()}
        except (TypeError, ValueError) as exc:
            raise malformed_reference(key, "grades must be numbers") from exc
    elif isinstance(raw, (list, tuple)):
        rel = {str(d): 1.0 for d in raw}
    else:
        raise malformed_reference(key, "is not a list of ids or an {id: grade} object")
    if not any(r > 0 for r in rel.values()):
        raise malformed_reference(key, "has no relevant id (the metric is undefined)")
    return rel


def _ids_in_text(text: str, value: Any) -> list[str]:
    """The ids a text lists, given its JSON (None when it holds none)."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [p.strip() for p in _LINE_SPLIT.split(text) if p.strip()]


def retrieved(item: EvalItem, key: str | None) -> list[str]:
    """The ranking: reference field `key`, or the ids the answer lists when key is None."""
    if key is None:
        return list(item.derived("listed_ids",
                                 lambda text: _ids_in_text(text, answer_json_or_none(item))))
    raw = item.require(key)
    if not isinstance(raw, (list, tuple)):
        raise malformed_reference(key, "is not a list of ids")
    return [str(d) for d in raw]


@dataclass(frozen=True)
class _Ranked:
    k: int = 10
    relevant_key: str = "relevant_ids"
    retrieved_key: str | None = "retrieved_ids"

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"{type(self).__name__}.k must be >= 1, got {self.k}")

    measure: ClassVar[Callable[[Sequence[str], Mapping[str, float], int], float]]

    def __call__(self, item: EvalItem) -> MetricResult:
        ranked = retrieved(item, self.retrieved_key)
        relevant = item.memo(f"relevance:{self.relevant_key}",
                             lambda: relevance(item, self.relevant_key))
        return MetricResult(self.measure(ranked, relevant, self.k))


@dataclass(frozen=True)
class PrecisionAtK(_Ranked):
    """Relevant ids among the first k retrieved, over k.

    >>> from tracerl.evals.items import item_from_text
    >>> it = item_from_text("", retrieved_ids=["d1", "d1", "d7"], relevant_ids=["d1", "d2"])
    >>> PrecisionAtK(k=2)(it).score
    0.5
    """

    name: str = "precision_at_k"
    measure = staticmethod(precision_at_k)


@dataclass(frozen=True)
class RecallAtK(_Ranked):
    """Share of the relevant ids among the first k retrieved.

    >>> from tracerl.evals.items import item_from_text
    >>> it = item_from_text("", retrieved_ids=["d3", "d1"], relevant_ids=["d1", "d2"])
    >>> RecallAtK(k=2)(it).score
    0.5
    """

    name: str = "recall_at_k"
    measure = staticmethod(recall_at_k)


@dataclass(frozen=True)
class MRR(_Ranked):
    """Reciprocal rank of the first relevant id in the first k (MRR@k over items).

    >>> from tracerl.evals.items import item_from_text
    >>> MRR()(item_from_text("", retrieved_ids=["a", "b", "c"], relevant_ids=["c"])).score
    0.3333333333333333
    """

    name: str = "mrr"
    measure = staticmethod(reciprocal_rank)


@dataclass(frozen=True)
class NDCG(_Ranked):
    """nDCG@k with graded relevance ({id: grade}) or binary (a list of ids).

    >>> from tracerl.evals.items import item_from_text
    >>> it = item_from_text("", retrieved_ids=["b", "a"], relevant_ids={"a": 2, "b": 1})
    >>> round(NDCG(k=2)(it).score, 4)
    0.8597
    """

    name: str = "ndcg"
    measure = staticmethod(ndcg_at_k)


def citations(text: str) -> list[str]:
    """Cited ids in order of first appearance: "[1]", "[doc-3]", "[1, 2]" (each id once);
    markdown links "[text](url)" are not citations."""
    found: list[str] = []
    for m in _CITATION.finditer(text):
        found += [c.strip() for c in re.split(r"[,;]", m.group(1)) if c.strip()]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class CitationPresence:
    """1.0 when the answer cites at least `min_count` distinct sources ("[1]", "[doc]").

    >>> from tracerl.evals.items import item_from_text
    >>> CitationPresence()(item_from_text("See [the docs](https://x.org).")).score
    0.0
    """

    min_count: int = 1
    name: str = "citation_presence"

    def __call__(self, item: EvalItem) -> MetricResult:
        cited = item.derived("citations", citations)
        ok = len(cited) >= self.min_count
        return MetricResult(float(ok), passed=ok, details={"cited": cited})


@dataclass(frozen=True)
class CitationValidity:
    """Share of the distinct cited ids that are in the retrieved set (reference field
    `retrieved_ids`); with `numbered`, "[n]" also cites the n-th retrieved document.
    Citing nothing scores 0 (an answer cannot earn validity by not citing); citing one
    valid source three times does not outweigh one invented source.

    >>> from tracerl.evals.items import item_from_text
    >>> it = item_from_text("A [d1][d1][d1], B [d9].", retrieved_ids=["d1", "d2"])
    >>> CitationValidity()(it).score
    0.5
    """

    retrieved_key: str = "retrieved_ids"
    numbered: bool = False
    name: str = "citation_validity"

    def __call__(self, item: EvalItem) -> MetricResult:
        pool = retrieved(item, self.retrieved_key)
        cited = item.derived("citations", citations)
        if not cited:
            return MetricResult(0.0, passed=False, details={"cited": [], "invalid": []})
        ids = set(pool)

        def valid(c: str) -> bool:
            if c in ids:
                return True
            return self.numbered and c.isdigit() and 1 <= int(c) <= len(pool)

        invalid = [c for c in cited if not valid(c)]
        return MetricResult(1 - len(invalid) / len(cited), passed=not invalid,
                            details={"cited": cited, "invalid": invalid})

"""Retrieval metrics by hand, duplicates in rankings and citations, unjudged relevance."""

from __future__ import annotations

import math

import pytest

from tracerl.evals.metric import score
from tracerl.evals.metrics import (
    MRR,
    NDCG,
    CitationPresence,
    CitationValidity,
    PrecisionAtK,
    RecallAtK,
)
from tracerl.evals.metrics.retrieval import citations, ndcg_at_k, precision_at_k

REL = {"relevant_ids": ["d1", "d2", "d3"]}


def test_precision_recall_mrr_hand_computed(item):
    it = item("", retrieved_ids=["d9", "d2", "d8", "d1"], **REL)
    assert PrecisionAtK(k=2)(it).score == 0.5
    assert PrecisionAtK(k=4)(it).score == 0.5
    assert RecallAtK(k=2)(it).score == pytest.approx(1 / 3)
    assert RecallAtK(k=4)(it).score == pytest.approx(2 / 3)
    assert MRR()(it).score == 0.5
    assert MRR(k=1)(it).score == 0.0


def test_precision_counts_missing_slots_as_misses(item):
    assert PrecisionAtK(k=4)(item("", retrieved_ids=["d1"], **REL)).score == 0.25


def test_repeated_id_gains_once():
    # a naive precision@3 counts d1 three times: 1.0
    assert precision_at_k(["d1", "d1", "d1"], {"d1": 1, "d2": 1}, 3) == pytest.approx(1 / 3)
    # DCG: d1 at rank 1 only; the repeat at rank 2 gains nothing
    assert ndcg_at_k(["d1", "d1"], {"d1": 1, "d2": 1}, 2) == pytest.approx(
        1 / (1 + 1 / math.log2(3)))


def test_ndcg_graded_hand_computed(item):
    it = item("", retrieved_ids=["c", "a", "x", "b"], relevant_ids={"a": 3, "b": 2, "c": 1})
    dcg = 1 / math.log2(2) + 3 / math.log2(3) + 2 / math.log2(5)
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert NDCG(k=4)(it).score == pytest.approx(dcg / ideal)
    assert NDCG(k=10)(item("", retrieved_ids=["a", "b", "c"],
                            relevant_ids={"a": 3, "b": 2, "c": 1})).score == pytest.approx(1.0)


def test_ranking_from_the_answer_when_asked(item):
    it = item('Top results: ["d2", "d7"]', **REL)
    assert PrecisionAtK(k=2, retrieved_key=None)(it).score == 0.5
    assert PrecisionAtK(k=2, retrieved_key=None)(item("", **REL)).score == 0.0


def test_relevance_the_data_cannot_give_is_unjudged(item):
    for bad in ([], {"a": 0}, "d1", {"a": "high"}):
        result = score(NDCG(), item("", retrieved_ids=["a"], relevant_ids=bad))
        assert result.score is None and "relevant_ids" in result.details["unjudged"]
    assert score(MRR(), item("", **REL)).details["unjudged"] == "no reference field 'retrieved_ids'"


def test_citations_parsing():
    text = "A [1]. B [2, 3] and [doc-7]; see [the guide](https://x.org) and [1] again."
    assert citations(text) == ["1", "2", "3", "doc-7"]
    assert citations("") == []


def test_citation_presence(item):
    assert CitationPresence()(item("Paris [3].")).passed
    assert not CitationPresence()(item("Paris.")).passed
    assert not CitationPresence(min_count=2)(item("Paris [3][3].")).passed


def test_citation_validity_distinct_citations(item):
    it = item("x [d1] [d1] [d1] [zzz]", retrieved_ids=["d1", "d2"])
    assert CitationValidity()(it).score == 0.5  # naive over citation marks: 3/4
    assert CitationValidity()(item("none", retrieved_ids=["d1"])).score == 0.0
    numbered = item("x [1] [3]", retrieved_ids=["a", "b"])
    assert CitationValidity(numbered=True)(numbered).score == 0.5
    assert score(CitationValidity(), item("[d1]")).score is None

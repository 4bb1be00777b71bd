"""Model-based metrics with the real models the wheels ship, loaded offline; and the
error that names the extra when a package is missing."""

from __future__ import annotations

import sys

import pytest

from tracerl.evals.items import item_from_text
from tracerl.evals.metric import score
from tracerl.evals.metrics import AnswerRelevance, Profanity, SemanticSimilarity
from tracerl.evals.metrics.models import require_extra, wordllama_model

slow = pytest.mark.slow  # loads the 16 MB embedding model or the scikit-learn model


@slow
def test_wordllama_loads_from_the_wheel_with_downloads_disabled(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.cache/wordllama to fall back on
    wordllama_model.cache_clear()
    model = wordllama_model()
    assert model.embed(["hello"]).shape == (1, 256)


@slow
def test_semantic_similarity_ranks_paraphrase_above_unrelated(item):
    metric = SemanticSimilarity()
    para = metric(item("The capital of France is Paris.", answer="Paris is France's capital"))
    other = metric(item("Stock markets fell sharply today.", answer="Paris is France's capital"))
    assert 0.9 < para.score <= 1.0 and other.score < 0.3
    assert metric(item("", answer="Paris")).score == 0.0  # an empty answer is wrong
    assert score(metric, item("Paris", answer="")).score is None  # no reference: unjudged


@slow
def test_answer_relevance_reads_the_question(item):
    on = AnswerRelevance()(item("Paris is the capital of France.",
                                question="What is the capital of France?"))
    off = AnswerRelevance()(item("I like turtles.", question="What is the capital of France?"))
    assert on.score > off.score
    empty = AnswerRelevance()(item("", question="What is the capital of France?"))
    assert empty.score == 0.0  # an empty answer is the policy's: wrong, never None
    assert AnswerRelevance()(item("Paris")).score is not None  # the task's user message
    no_question = score(AnswerRelevance(), item_from_text("Paris"))  # no user message
    assert no_question.score is None and "no question" in no_question.details["unjudged"]


@slow
def test_profanity(item):
    clean = Profanity()(item("Thank you, that was really helpful."))
    rude = Profanity()(item("shut up you stupid idiot"))
    assert clean.passed and not rude.passed
    assert clean.score > 0.9 and rude.score < 0.5
    empty = score(Profanity(), item(""))  # judged (no profanity in it), never None
    assert empty.score is not None and empty.passed


def test_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "wordllama", None)  # import fails as if not installed
    with pytest.raises(ImportError, match=r"pip install 'tracerl\[semantic\]'"):
        require_extra("wordllama")


@slow
def test_worked_examples_in_docstrings_hold():
    import doctest

    from tracerl.evals.metrics import models

    assert doctest.testmod(models).failed == 0

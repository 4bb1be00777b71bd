"""Model-based metrics from models that a PyPI package ships, loaded offline.

- `SemanticSimilarity`, `AnswerRelevance`: cosine similarity of WordLlama embeddings
  (the `wordllama` wheel ships a 16 MB token-embedding model, l2_supercat 256-d). Its
  default loader looks for the tokenizer under `<package>/tokenizer/` while the wheel
  puts it in `<package>/tokenizers/`, then falls back to a download; we point its
  cache directory at the package's own folder (where `weights/` and `tokenizers/`
  are) and disable downloads, so it loads from the wheel or fails naming the file.
  Extra: `pip install 'tracerl[semantic]'`.
- `Profanity`: the linear SVM of `alt-profanity-check` (a scikit-learn model pickled
  with the very scikit-learn version its release pins). Extra:
  `pip install 'tracerl[profanity]'`.

Models load once per process, on first use; a missing package is an ImportError that
names the extra. These judge meaning approximately (a bag of embedded tokens: "dog
bites man" and "man bites dog" are near neighbours); prefer the deterministic metrics
where the answer can be checked exactly.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from tracerl.evals.fault import Unjudged
from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult
from tracerl.evals.metrics.overlap import references

EXTRAS = {"wordllama": "semantic", "profanity_check": "profanity"}


def require_extra(module: str) -> ModuleType:
    """Import an optional dependency, or fail naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        extra = EXTRAS[module]
        raise ImportError(f"this metric needs the optional package {module!r}: "
                          f"pip install 'tracerl[{extra}]'") from exc


@functools.lru_cache(maxsize=1)
def wordllama_model() -> Any:
    """The WordLlama model shipped in the wheel, loaded with downloads disabled."""
    wordllama = require_extra("wordllama")
    own_dir = Path(wordllama.__file__).parent
    return wordllama.WordLlama.load(cache_dir=own_dir, disable_download=True)


def cosine(a: str, b: str) -> float:
    """Embedding cosine similarity clipped to [0, 1]; an empty text is similar to
    nothing (0), whatever the embedding of nothing happens to be."""
    if not a.strip() or not b.strip():
        return 0.0
    value = float(wordllama_model().similarity(a, b))
    return min(1.0, max(0.0, value)) if value == value else 0.0  # NaN: no known tokens


@dataclass(frozen=True)
class SemanticSimilarity:
    """Embedding similarity of the answer to the reference (best over several).

    >>> from tracerl.evals.items import item_from_text
    >>> SemanticSimilarity()(item_from_text("The capital of France is Paris",
    ...                                     answer="Paris is France's capital")).score > 0.9
    True
    """

    reference_key: str = "answer"
    name: str = "semantic_similarity"

    def __call__(self, item: EvalItem) -> MetricResult:
        out = item.output_text()
        return MetricResult(max(cosine(out, r) for r in references(item, self.reference_key)))


def question_of(item: EvalItem, key: str) -> str:
    """The question: reference field `key`, else the task's last user message."""
    q = item.reference.get(key)
    if isinstance(q, str) and q.strip():
        return q
    users = [m.content for m in item.trajectory.task.messages if m.role == "user"]
    if not users or not users[-1].strip():
        raise Unjudged(f"no question: no reference field {key!r} and no user message")
    return users[-1]


@dataclass(frozen=True)
class AnswerRelevance:
    """Embedding similarity of the answer to the question it answers (reference field
    `question`, else the task's last user message).

    >>> from tracerl.evals.items import item_from_text
    >>> off = AnswerRelevance()(item_from_text("Stocks fell.", question="Capital of France?"))
    >>> on = AnswerRelevance()(item_from_text("Paris.", question="Capital of France?"))
    >>> off.score < on.score
    True
    """

    question_key: str = "question"
    name: str = "answer_relevance"

    def __call__(self, item: EvalItem) -> MetricResult:
        return MetricResult(cosine(item.output_text(), question_of(item, self.question_key)))


@functools.lru_cache(maxsize=1)
def profanity_model() -> Any:
    return require_extra("profanity_check")


@dataclass(frozen=True)
class Profanity:
    """1 - probability that the answer is profane or offensive (alt-profanity-check);
    passed below `threshold`.

    >>> from tracerl.evals.items import item_from_text
    >>> Profanity()(item_from_text("Thank you, that was helpful.")).passed
    True
    """

    threshold: float = 0.5
    name: str = "profanity_free"

    def __call__(self, item: EvalItem) -> MetricResult:
        prob = float(profanity_model().predict_prob([item.output_text()])[0])
        return MetricResult(1.0 - prob, passed=prob < self.threshold,
                            details={"probability": prob})

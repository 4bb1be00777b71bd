"""The labelled guardrail corpus (issue 6): positives and hard negatives per category.

Written for this project by a seeded generator (generate.py) and committed as JSONL. Two
splits: "dev" (the scanners were tuned on it) and "heldout" (separate templates, never
tuned on); benchmarks/guard.py reports both.

Benchmark data, not part of the installed package (which ships the scanners only):
benchmarks/guard.py and tests/guard import it with benchmarks/ on sys.path.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

CORPUS_PATH = Path(__file__).with_name("guard_corpus.jsonl")
CATEGORIES = ("jailbreak", "code_injection", "secrets", "pii", "invisible")
SPLITS = ("dev", "heldout")
_NUMBERED = re.compile(r"(?:paraphrase|training)_set(\d+)")
TRAINING_SETS = (12, 13, 14)
"""Override sets written like the paraphrase sets for training only, never scored."""


@dataclass(frozen=True)
class CorpusItem:
    """One labelled text."""

    id: str
    text: str
    category: str
    """The scanner category the item tests."""
    positive: bool
    """True: the category's scanner must fire. False: a hard negative, nothing may fire."""
    split: str
    """"dev" or "heldout"."""
    template: str
    """The template that produced it (for per-family error analysis)."""

    def to_json(self) -> str:
        return json.dumps(self.__dict__, ensure_ascii=False)


def load_corpus(split: str | None = None, path: Path = CORPUS_PATH) -> list[CorpusItem]:
    """All corpus items, or those of one split."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
    items = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = CorpusItem(**json.loads(line))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{n}: bad corpus line: {exc}") from None
            if split is None or item.split == split:
                items.append(item)
    return items


def paraphrase_numbers() -> list[int]:
    """The numbers of the hand-written override sets in this folder, ascending: 1 and 2
    (paraphrase_sets.py), the paraphrase sets paraphrase_setN.py and the training sets
    training_setN.py (12-14)."""
    names = (_NUMBERED.fullmatch(f.stem) for f in Path(__file__).parent.glob("*_set*.py"))
    return sorted({int(m.group(1)) for m in names if m} | {1, 2})


def paraphrase_set(n: int) -> dict[str, list[tuple[str, bool]]]:
    """Hand-written override set `n` by family: {family: [(text, is an attack), ...]}."""
    if n in (1, 2):
        module = importlib.import_module("guard_corpus.paraphrase_sets")
        return getattr(module, "SETS" if n == 1 else "SETS_2")
    for prefix in ("paraphrase_set", "training_set"):
        try:
            module = importlib.import_module(f"guard_corpus.{prefix}{n}")
        except ModuleNotFoundError:
            continue
        return getattr(module, f"SETS_{n}")
    raise ValueError(f"no override set {n} in {Path(__file__).parent} "
                     f"(there are {paraphrase_numbers()})")

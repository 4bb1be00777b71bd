"""Regenerate guard_corpus.jsonl (from guard_training/: `python -m guard_corpus.generate`).

Each template is sampled until it yields the wanted number of distinct texts (or runs
out of variety); negatives are half the time wrapped in a realistic document, so the
same benign line is tested both alone and in context.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Mapping

from guard_corpus import CORPUS_PATH, CorpusItem
from guard_corpus.dev_negatives import DEV_HARD_NEGATIVES, DEV_NEGATIVES
from guard_corpus.dev_templates import DEV_POSITIVES
from guard_corpus.heldout_templates import HELDOUT_NEGATIVES, HELDOUT_POSITIVES
from guard_corpus.wrap import embed

Template = Callable[[random.Random], str]

# (split, positive?, templates by category, distinct texts wanted per template)
PLAN: tuple[tuple[str, bool, Mapping[str, tuple[Template, ...]], int], ...] = (
    ("dev", True, DEV_POSITIVES, 8),
    ("dev", False, DEV_NEGATIVES, 40),
    ("heldout", True, HELDOUT_POSITIVES, 26),
    ("heldout", False, HELDOUT_NEGATIVES, 26),
    # Issue 15, appended last so that every earlier draw (and item) stays as it was.
    ("dev", False, DEV_HARD_NEGATIVES, 20),
)


def _draw(
    rng: random.Random, template: Template, want: int, wrap: bool, seen: set[str]
) -> list[str]:
    out: list[str] = []
    for _ in range(want * 40):
        if len(out) == want:
            break
        text = template(rng)
        if wrap and rng.random() < 0.5:
            text = embed(rng, text)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def build(seed: int = 6) -> list[CorpusItem]:
    """The whole corpus, deterministic in `seed`."""
    rng = random.Random(seed)
    seen: set[str] = set()
    items: list[CorpusItem] = []
    for split, positive, table, want in PLAN:
        for category, templates in table.items():
            for template in templates:
                wrap = not positive or category == "invisible"
                for text in _draw(rng, template, want, wrap, seen):
                    n = len(items)
                    items.append(CorpusItem(f"{split}-{n:04d}", text, category, positive, split,
                                            template.__name__))  # fmt: skip
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=6, help="generator seed")
    parser.add_argument("--out", default=str(CORPUS_PATH), help="JSONL file to write")
    args = parser.parse_args(argv)
    items = build(args.seed)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.writelines(item.to_json() + "\n" for item in items)
    pos = sum(i.positive for i in items)
    neg = len(items) - pos
    print(f"wrote {len(items)} items ({pos} positives, {neg} hard negatives) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

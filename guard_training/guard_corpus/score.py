"""Precision, recall and false-positive rate of scanners over labelled corpus items.

Definitions (also in docs/benchmarks.md): for scanner S, a positive of S's category is
a true positive when S reports a finding at or above `min_score`; a hard negative (of
any category) on which S fires is a false positive. Positives of other categories are
left out of S's precision, since they may legitimately contain S's kind (a reverse
shell holds an IP address); how often S fires on them is reported as `cross_fires`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from guard_corpus import CorpusItem

Detector = Callable[[str], set[str]]
"""text -> names of the categories that fired."""


@dataclass
class ScannerScore:
    """Confusion counts of one scanner on one split."""

    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0
    cross_fires: int = 0
    missed: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def fpr(self) -> float:
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else 0.0


def score(
    items: Iterable[CorpusItem], detect: Detector, categories: Sequence[str]
) -> dict[str, ScannerScore]:
    """Per-category confusion counts of `detect` over `items`."""
    out = {c: ScannerScore() for c in categories}
    for item in items:
        fired = detect(item.text)
        for c in categories:
            s = out[c]
            hit = c in fired
            if item.positive and item.category == c:
                s.tp += hit
                s.fn += not hit
                if not hit:
                    s.missed.append(item.id)
            elif not item.positive:
                s.fp += hit
                s.tn += not hit
                if hit:
                    s.false_alarms.append(item.id)
            else:
                s.cross_fires += hit
    return out


def any_fired(items: Iterable[CorpusItem], detect: Detector) -> tuple[int, int]:
    """(hard negatives on which any category fired, hard negatives in total)."""
    negatives = [i for i in items if not i.positive]
    return sum(bool(detect(i.text)) for i in negatives), len(negatives)


def print_recall_table(sets: dict[str, list[tuple[str, bool]]],
                       detectors: dict[str, Callable[[str], bool]]) -> None:
    """A markdown table of each detector's recall and FPR on each set of (text, is attack)."""
    print("| set | detector | recall | FPR |\n|---|---|---:|---:|")
    for name, items in sets.items():
        for label, fired in detectors.items():
            pos = [fired(t) for t, y in items if y]
            neg = [fired(t) for t, y in items if not y]
            print(f"| {name} | {label} | {_share(pos)} | {_share(neg)} |")


def _share(fired: list[bool]) -> str:
    """'0.950 (19/20)', or '-' for no items."""
    return f"{sum(fired) / len(fired):.3f} ({sum(fired)}/{len(fired)})" if fired else "-"

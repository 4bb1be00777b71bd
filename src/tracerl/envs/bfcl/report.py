"""A BFCL-style score report: accuracy per category, BFCL's section summaries, overall.

Sections as BFCL v4's leaderboard builds them from categories:
- Non-Live AST: unweighted mean of simple (Python only here), multiple, parallel,
  parallel_multiple;
- Live AST: mean over the live entries (weighted by count) of live_simple,
  live_multiple, live_parallel, live_parallel_multiple;
- Multi-Turn: unweighted mean of base, miss_func, miss_param, long_context;
- Irrelevance: unweighted mean of irrelevance and live_irrelevance; Relevance:
  live_relevance.
Overall weighs the sections present as BFCL does (non-live 10, live 10, irrelevance
10, multi-turn 30); BFCL's own overall also gives its agentic sections (web search,
memory: not loaded here) 40, so this overall is not the leaderboard's. A section with
none of its categories evaluated is absent, not 0. Scores are percentages of samples
whose episode BFCL's rules accept.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass

SECTIONS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("Non-Live AST", ("simple_python", "multiple", "parallel", "parallel_multiple"), False),
    ("Live AST", ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"),
     True),
    ("Multi-Turn", ("multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                    "multi_turn_long_context"), False),
    ("Irrelevance", ("irrelevance", "live_irrelevance"), False),
    ("Relevance", ("live_relevance",), False),
)
"""(name, categories, weighted by count)."""
OVERALL_WEIGHTS = {"Non-Live AST": 10, "Live AST": 10, "Irrelevance": 10, "Multi-Turn": 30}


@dataclass(frozen=True)
class CategoryScore:
    category: str
    accuracy: float
    """Percent of samples BFCL's rules accept."""
    samples: int
    entries: int


@dataclass(frozen=True)
class BfclReport:
    model: str
    split: str
    samples_per_entry: int
    categories: tuple[CategoryScore, ...]
    sections: dict[str, float]
    overall: float | None

    def table(self) -> str:
        lines = [f"BFCL v4 on the {self.split} split of tracerl's split (not the leaderboard's "
                 f"all-ids score): {self.model}", ""]
        width = max([len(c.category) for c in self.categories] + [24])
        lines.append(f"{'Overall (weights 10/10/10/30)':{width}s}  "
                     + (f"{self.overall:6.2f}" if self.overall is not None else "   n/a"))
        for name, value in self.sections.items():
            lines.append(f"{name:{width}s}  {value:6.2f}")
        lines.append("")
        lines.append(f"{'category':{width}s}  {'acc %':>6s}  {'entries':>7s}  {'samples':>7s}")
        for c in self.categories:
            lines.append(f"{c.category:{width}s}  {c.accuracy:6.2f}  {c.entries:7d}  "
                         f"{c.samples:7d}")
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def bfcl_report(results: Iterable[tuple[str, str, bool]], model: str, split: str,
                samples_per_entry: int) -> BfclReport:
    """`results`: (category, entry id, accepted) per sample."""
    by_category: dict[str, list[tuple[str, bool]]] = {}
    for category, entry_id, ok in results:
        by_category.setdefault(category, []).append((entry_id, ok))
    scores = {c: CategoryScore(c, 100.0 * sum(ok for _, ok in rows) / len(rows), len(rows),
                               len({i for i, _ in rows}))
              for c, rows in by_category.items()}
    sections: dict[str, float] = {}
    for name, members, weighted in SECTIONS:
        present = [scores[c] for c in members if c in scores]
        if not present:
            continue
        if weighted:
            sections[name] = (sum(s.accuracy * s.entries for s in present)
                              / sum(s.entries for s in present))
        else:
            sections[name] = sum(s.accuracy for s in present) / len(present)
    weighted_sections = {n: w for n, w in OVERALL_WEIGHTS.items() if n in sections}
    overall = (sum(sections[n] * w for n, w in weighted_sections.items())
               / sum(weighted_sections.values())) if weighted_sections else None
    order = [c for _, members, _ in SECTIONS for c in members if c in scores]
    return BfclReport(model, split, samples_per_entry, tuple(scores[c] for c in order),
                      sections, overall)

"""The run page's curves as JSON for the charting library: one chart per Panel, every
run's series overlaid on one step axis.

Which panels exist and what each holds is `tracerl.train.curves.panels`, the definition
curves.png draws from; here zeros are kept (an all-zero unjudged or guard series says
"none", which is worth seeing), and series of several runs share a chart, aligned on the
union of their steps (uPlot takes one x array per chart, with null where a series has no
point).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tracerl.train.curves import Panel, panels
from tracerl.view.runs import RunFiles


def run_panels(run: RunFiles) -> list[Panel]:
    records = run.records().records
    evals = [r for r in records if r.get("stage") == "eval"]
    return panels(records, evals, keep_zeros=True)


def charts(runs: Sequence[RunFiles]) -> list[dict[str, Any]]:
    """One chart per panel title, in display order, with every run's series."""
    by_title: dict[str, tuple[Panel, list[tuple[str, Any]]]] = {}
    for run in runs:
        for panel in run_panels(run):
            entry = by_title.setdefault(panel.title, (panel, []))
            entry[1].extend((run.name, s) for s in panel.series)
    out = []
    for panel, series in by_title.values():
        xs = sorted({x for _, s in series for x in s.steps})
        at = {x: i for i, x in enumerate(xs)}
        lines = []
        for run_name, s in series:
            values: list[float | None] = [None] * len(xs)
            for x, v in zip(s.steps, s.values, strict=True):
                values[at[x]] = v
            label = f"{run_name}: {s.label}" if len(runs) > 1 else s.label
            lines.append({"label": label, "values": values, "points": "o" in s.style})
        out.append({"title": panel.title, "xlabel": panel.xlabel, "ylabel": panel.ylabel,
                    "unit_range": panel.unit_range, "x": xs, "series": lines})
    return out

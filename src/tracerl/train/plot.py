"""curves.png: one labelled panel per quantity, from metrics.jsonl and the evaluations.

Which panels exist and what they hold is `panels` (curves.py, shared with `tracerl
view`). Panels against RL steps share one x range, so a step lines up across them; the
SFT and DPO panels count their own steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from tracerl.train.curves import Panel, Series, panels  # noqa: E402

__all__ = ["Panel", "Series", "curves_figure", "panels", "plot_curves"]


def _draw(ax: Any, panel: Panel, rl_range: tuple[float, float] | None) -> None:
    for s in panel.series:
        few = len(s.steps) <= 40
        style = s.style if s.style != "-" or not few else ".-"
        # Evaluations are hollow markers under the per-step lines, so a held-out line
        # that equals the train line (both 0 early on) never hides it.
        marked = "o" in style
        ax.plot(s.steps, s.values, style, label=s.label, markersize=6 if marked else 4,
                zorder=2 if marked else 3, fillstyle="none" if "--" in style else "full")
    ax.set_title(panel.title)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if panel.xlabel == "RL step" and rl_range is not None:
        lo, hi = rl_range
        pad = max(0.5, 0.03 * (hi - lo))
        ax.set_xlim(lo - pad, hi + pad)
    if panel.unit_range:
        ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)
    if len(panel.series) > 1:
        ax.legend(fontsize="small")


def curves_figure(records: Sequence[dict[str, Any]], evals: Sequence[dict[str, Any]],
                  title: str = "") -> Figure:
    """The figure of `panels(records, evals)`, two per row (close it when done)."""
    shown = panels(records, evals)
    cols = 1 if len(shown) <= 1 else 2
    rows = max(1, -(-len(shown) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 3.2 * rows), squeeze=False)
    rl_steps = [x for p in shown if p.xlabel == "RL step" for s in p.series for x in s.steps]
    rl_range = (min(rl_steps), max(rl_steps)) if rl_steps else None
    flat = list(axes.flat)
    for ax, panel in zip(flat, shown, strict=False):
        _draw(ax, panel, rl_range)
    for ax in flat[len(shown):]:
        ax.set_axis_off()
    if not shown:
        flat[0].text(0.5, 0.5, "no metrics recorded", ha="center", va="center")
    fig.suptitle(f"{title}: training curves" if title else "training curves")
    fig.tight_layout()
    return fig


def plot_curves(records: list[dict[str, Any]], evals: list[dict[str, Any]], path: Path,
                title: str | None = None) -> list[str]:
    """Write curves.png; returns the titles of the panels drawn.

    `title` defaults to the run's name, the name of the run directory holding `path`."""
    fig = curves_figure(records, evals, path.parent.name if title is None else title)
    try:
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)
    return [p.title for p in panels(records, evals)]

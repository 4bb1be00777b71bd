"""curves.png: one labelled panel per quantity, from metrics.jsonl and the evaluations.

Panels, each left out when its data are absent: reward, success (train per RL step,
held-out at every evaluation), tool use, SFT loss, DPO loss, KL, clip fraction,
entropy. KL to the reference counts as absent when it is 0 at every step (the run has
no reference model). Panels against RL steps share one x range, so a step lines up
across them; the SFT and DPO panels count their own steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402


@dataclass(frozen=True)
class Series:
    label: str
    steps: list[float]
    values: list[float]
    style: str = "-"
    """A matplotlib format: "-" a line per step, "o-" markers joined (evaluations)."""


@dataclass(frozen=True)
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    unit_range: bool = False
    """Fractions (and rewards that stay in [0, 1]): the y axis spans [0, 1]."""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _series(records: Sequence[dict[str, Any]], key: str, label: str, style: str = "-",
            zero_is_absent: bool = False) -> list[Series]:
    """`key` against `step` over the records that have it; [] when there are none (or,
    with `zero_is_absent`, when every value is 0)."""
    points = [(r["step"], r[key]) for r in records if _number(r.get(key))]
    if not points or (zero_is_absent and not any(v != 0 for _, v in points)):
        return []
    points.sort(key=lambda p: p[0])  # stable: a repeated step keeps its order
    return [Series(label, [p[0] for p in points], [p[1] for p in points], style)]


def panels(records: Sequence[dict[str, Any]], evals: Sequence[dict[str, Any]]) -> list[Panel]:
    """The panels that have data, in display order."""
    rl = [r for r in records if r.get("stage") == "rl"]
    reward = (_series(rl, "reward_mean", "train (per step)")
              + _series(evals, "mean_reward", "held-out (evaluations)", "o-"))
    sft = [r for r in records if r.get("stage") == "sft"]
    dpo = [r for r in records if r.get("stage") == "dpo"]
    candidates = [
        Panel("Reward", "RL step", "mean outcome reward", reward,
              unit_range=all(0 <= v <= 1 for s in reward for v in s.values)),
        Panel("Success", "RL step", "fraction of samples",
              _series(rl, "success", "train (per step)")
              + _series(evals, "success", "held-out (evaluations)", "o-"), unit_range=True),
        Panel("Tool use", "RL step", "per sample",
              _series(rl, "tool_use", "tool_use (fraction with a call)")
              + _series(rl, "tool_errors", "tool_errors (errors per sample)")),
        Panel("SFT loss", "SFT step", "cross-entropy", _series(sft, "loss", "loss")),
        Panel("DPO loss", "DPO step", "loss", _series(dpo, "loss", "loss")),
        Panel("KL", "RL step", "nats per token",
              _series(rl, "kl", "kl (to reference)", zero_is_absent=True)
              + _series(rl, "approx_kl", "approx_kl (old || new)")),
        Panel("Clip fraction", "RL step", "fraction of tokens",
              _series(rl, "clip_fraction", "clip_fraction")),
        Panel("Entropy", "RL step", "nats per token", _series(rl, "entropy", "entropy")),
    ]
    return [p for p in candidates if p.series]


def _draw(ax: Any, panel: Panel, rl_range: tuple[float, float] | None) -> None:
    for s in panel.series:
        few = len(s.steps) <= 40
        style = s.style if s.style != "-" or not few else ".-"
        ax.plot(s.steps, s.values, style, label=s.label, markersize=5 if "o" in style else 4)
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

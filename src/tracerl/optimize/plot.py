"""score.png: the score of each scored candidate against the budget spent, with the
best so far, in calls and in tokens (two panels)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from tracerl.optimize.history import Evaluation  # noqa: E402


def best_so_far(history: Sequence[Evaluation]) -> list[tuple[int, int, float]]:
    """(spent calls, spent tokens, best full score so far) at each full scoring."""
    out: list[tuple[int, int, float]] = []
    top = float("-inf")
    for e in history:
        if e.full and e.score is not None:
            top = max(top, e.score)
            out.append((e.spent_calls, e.spent_tokens, top))
    return out


def plot_search(history: Sequence[Evaluation], path: Path, title: str) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    full = [e for e in history if e.full and e.score is not None]
    partial = [e for e in history if not e.full and e.score is not None]
    steps = best_so_far(history)
    for ax, attr, label in ((axes[0], "spent_calls", "model calls spent"),
                            (axes[1], "spent_tokens", "tokens spent")):
        ax.scatter([getattr(e, attr) for e in partial], [e.score for e in partial], s=10,
                   color="0.7", label="minibatch score")
        ax.scatter([getattr(e, attr) for e in full], [e.score for e in full], s=18,
                   label="candidate (all search tasks)")
        if steps:
            x = [s[0] if attr == "spent_calls" else s[1] for s in steps]
            ax.step(x, [s[2] for s in steps], where="post", color="C3", label="best so far")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("objective")
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

"""curves.png: RL reward and held-out success against step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot_curves(records: list[dict[str, Any]], evals: list[dict[str, Any]], path: Path) -> None:
    rl = [r for r in records if r.get("stage") == "rl" and "reward_mean" in r]
    fig, ax = plt.subplots(figsize=(7, 4))
    if rl:
        ax.plot([r["step"] for r in rl], [r["reward_mean"] for r in rl], label="train reward")
        ax.plot([r["step"] for r in rl], [r["success"] for r in rl], label="train success",
                alpha=0.6)
    if evals:
        ax.plot([e["step"] for e in evals], [e["success"] for e in evals], "o-",
                label="held-out success")
    ax.set_xlabel("RL step")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    ax.set_title("tracerl: reward and success")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

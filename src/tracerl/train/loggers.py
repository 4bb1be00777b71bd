"""Metrics sinks: metrics.jsonl and TensorBoard event files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


class MetricsLog:
    """Append-only JSONL of metric records, mirrored to TensorBoard when enabled."""

    def __init__(self, run_dir: Path, tensorboard: bool, resume_step: int | None = None) -> None:
        self.path = run_dir / "metrics.jsonl"
        if resume_step is not None and self.path.exists():
            self._truncate_after(resume_step)
        self.writer = None
        if tensorboard:
            from tensorboardX import SummaryWriter

            self.writer = SummaryWriter(str(run_dir / "tb"), purge_step=resume_step)

    def _truncate_after(self, step: int) -> None:
        """Drop RL records past the checkpoint a resumed run restarts from."""
        kept = [line for line in self.path.read_text().splitlines()
                if line.strip() and not (json.loads(line).get("stage") == "rl"
                                         and json.loads(line).get("step", 0) > step)]
        self.path.write_text("".join(k + "\n" for k in kept))

    def log(self, stage: str, step: int, values: dict[str, Any]) -> None:
        record = {"stage": stage, "step": step, **values}
        with self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")
        if self.writer is not None:
            for k, v in values.items():
                if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
                    self.writer.add_scalar(f"{stage}/{k}", v, step)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

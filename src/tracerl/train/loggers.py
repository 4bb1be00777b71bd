"""Metrics: metrics.jsonl, mirrored to the sinks of tracerl.train.sinks.

metrics.jsonl is the run's own record: it is written first and its failures are real
failures. Every sink (TensorBoard, W&B, MLflow) mirrors it, and a sink that raises
mid-run is contained: warned about once, counted (`MetricsLog.failures`), skipped for
that record. A dashboard outage never ends a training run, and never goes unnoticed.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tracerl.train.sinks import Sink, open_sinks

if TYPE_CHECKING:
    from tracerl.train.config import TrainConfig

log = logging.getLogger(__name__)


class MetricsLog:
    """Append-only JSONL of metric records, fanned out to every sink."""

    def __init__(self, run_dir: Path, sinks: Sequence[Sink] = (),
                 resume_step: int | None = None) -> None:
        self.path = run_dir / "metrics.jsonl"
        if resume_step is not None and self.path.exists():
            self._truncate_after(resume_step)
        self.sinks = list(sinks)
        self.failures: dict[str, int] = {}
        """Sink name -> calls that raised (each contained)."""

    @classmethod
    def for_run(cls, config: TrainConfig, run_dir: Path,
                resume_step: int | None = None) -> MetricsLog:
        """metrics.jsonl plus the sinks the `log` section turns on (resume_step: the
        checkpoint's RL step when resuming, else None)."""
        return cls(run_dir, open_sinks(config, run_dir, resume_step), resume_step)

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
        scalars = {k: float(v) for k, v in values.items()
                   if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)}
        for sink in self.sinks:
            try:
                sink.log(stage, step, scalars)
            except Exception as e:
                self._contain(sink, f"{stage} step {step}", e)

    def _contain(self, sink: Sink, where: str, error: Exception) -> None:
        self.failures[sink.name] = self.failures.get(sink.name, 0) + 1
        if self.failures[sink.name] == 1:
            log.warning("%s sink failed at %s (%s: %s); training goes on, metrics.jsonl has "
                        "every record, further %s failures are counted", sink.name, where,
                        type(error).__name__, error, sink.name)

    def close(self) -> None:
        for sink in self.sinks:
            try:
                sink.close()
            except Exception as e:
                self._contain(sink, "close", e)
        for name, count in self.failures.items():
            log.warning("%s sink: %d failed calls in this run (contained)", name, count)


def read_metrics(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "metrics.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

"""The history of a search: one `Evaluation` per scoring of a prompt, in order.

An evaluation scores one prompt on a set of search tasks (all of them, `full`, or a
minibatch), records what it cost (the calls and tokens spent since the previous entry,
teacher replies that proposed it included) and the running totals. A proposal the
teacher could not turn into a prompt is an entry too (`skipped`), and so is a scoring
cut short by the budget (`aborted`), so the entries always add up to the ledger.

history.jsonl holds one entry per line, appended and flushed as the search goes; a
resumed search reads it back (`read_history`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from tracerl.optimize.prompt import Prompt
from tracerl.types import Trajectory

Status = Literal["scored", "unjudged", "skipped", "aborted"]


@dataclass(frozen=True)
class Evaluation:
    index: int
    prompt: Prompt
    operation: str
    """What made the prompt: start, variant, edit, rewrite, mutate, refine, merge, ..."""
    parents: tuple[int, ...]
    """Indices of the evaluations whose prompts this one came from."""
    status: Status
    score: float | None
    """Mean objective over the judged rollouts (None when none was judged)."""
    task_scores: Mapping[str, float | None]
    """Task id -> mean objective of its samples (None: none judged)."""
    full: bool
    """Scored on every search task (else a minibatch)."""
    calls: int
    tokens: int
    cached_calls: int
    spent_calls: int
    """Calls spent by the search up to and including this entry."""
    spent_tokens: int
    unjudged: int = 0
    """Rollouts the objective could not judge (it raised or returned None)."""
    note: str = ""
    seconds: float = 0.0
    trajectories: tuple[Trajectory, ...] = field(default=(), compare=False, repr=False)
    """The rollouts (kept in memory for feedback; not written to history.jsonl)."""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)  # type: ignore[call-overload]
        data.pop("trajectories")
        data["prompt"] = self.prompt.to_dict()
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Evaluation:
        fields = dict(data)
        fields["prompt"] = Prompt.from_dict(fields["prompt"])
        fields["parents"] = tuple(fields.get("parents") or ())
        return cls(**fields)


def best(history: list[Evaluation]) -> Evaluation | None:
    """The full evaluation with the highest score (the earliest on ties)."""
    full = [e for e in history if e.full and e.score is not None]
    return max(full, key=lambda e: (e.score, -e.index)) if full else None


def read_history(path: Path) -> list[Evaluation]:
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                out.append(Evaluation.from_json(json.loads(line)))
            except (ValueError, TypeError, KeyError) as e:
                raise ValueError(f"{path}:{n}: not a history entry ({e})") from e
    return out


class HistoryLog:
    """Appends entries to history.jsonl, one flushed line each."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def write(self, entry: Evaluation) -> None:
        if self.path is None:
            return
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry.to_json()) + "\n")

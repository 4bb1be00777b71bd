"""The data of a search: tasks to score candidates on, held-out tasks to report the
winner on, and a pool of few-shot examples (oracle demonstrations).

From a task family: the pool and the search tasks are disjoint draws from its train
split, the held-out tasks come from its held-out split. From a JSONL file: one task
per line,

    {"id": "q1", "prompt": "..." | "messages": [...], "answer": ..., "metadata": {...},
     "split": "train" | "heldout", "demonstration": [...]}

where `split` defaults to a hash of the id (a fifth held out, as the built-in
families do) and `demonstration` (OpenAI-format assistant and tool messages) makes a
train line a candidate for the example pool. The env and the objective still come from
the family, so the tasks must fit its tools.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracerl.envs.family import TaskFamily
from tracerl.types import Message, Task
from tracerl.util.jsonl import json_lines


class DataError(ValueError):
    """The search has no usable data (an empty split, a bad JSONL line)."""


@dataclass(frozen=True)
class SearchData:
    train: tuple[Task, ...]
    """Tasks candidates are scored on during the search."""
    heldout: tuple[Task, ...]
    """Tasks the best candidate (and the starting prompt) are reported on."""
    examples: Mapping[str, tuple[Message, ...]] = field(default_factory=dict)
    """Few-shot pool: example id -> the whole conversation (task opening + demonstration)."""

    def __post_init__(self) -> None:
        if not self.train:
            raise DataError("the search has no train tasks to score candidates on "
                            "(data.train_tasks must be >= 1 and the source non-empty)")
        if not self.heldout:
            raise DataError("the search has no held-out tasks to report the best prompt on "
                            "(data.heldout_tasks must be >= 1 and the source must hold some)")


def family_data(family: TaskFamily, train: int, heldout: int, pool: int,
                seed: int) -> SearchData:
    """Disjoint train draws for the pool and the search tasks; held-out tasks apart."""
    drawn = family.tasks("train", train + pool, seed=seed) if train + pool else []
    rng = random.Random(seed)
    examples: dict[str, tuple[Message, ...]] = {}
    for task in drawn[:pool]:
        try:
            demo = family.demonstration(task, rng)
        except (ValueError, NotImplementedError):  # a family without an oracle: no pool
            break
        examples[task.id] = (*task.messages, *demo)
    return SearchData(tuple(drawn[pool:]), tuple(family.tasks("heldout", heldout, seed=seed)
                                                 if heldout else ()), examples)


def _task(where: str, record: Any) -> tuple[Task, str | None, tuple[Message, ...]]:
    if not isinstance(record, dict):
        raise DataError(f"{where}: expected a JSON object, got {type(record).__name__}")
    if "messages" in record:
        try:
            messages = tuple(Message.from_openai(m) for m in record["messages"])
        except (ValueError, TypeError, KeyError) as e:
            raise DataError(f"{where}: bad 'messages': {e}") from e
    elif isinstance(record.get("prompt"), str):
        messages = (Message("user", record["prompt"]),)
    else:
        raise DataError(f"{where}: a task needs 'prompt' (text) or 'messages' (a list)")
    if not messages:
        raise DataError(f"{where}: 'messages' is empty")
    task_id = str(record.get("id") or where)
    split = record.get("split")
    if split not in (None, "train", "heldout"):
        raise DataError(f"{where}: split must be 'train' or 'heldout', got {split!r}")
    try:
        demo = tuple(Message.from_openai(m) for m in record.get("demonstration") or ())
    except (ValueError, TypeError, KeyError) as e:
        raise DataError(f"{where}: bad 'demonstration': {e}") from e
    metadata = record.get("metadata") or {}
    return Task(task_id, messages, record.get("answer"), dict(metadata)), split, demo


def _heldout_by_hash(task_id: str) -> bool:
    return hashlib.sha256(task_id.encode()).digest()[0] < 51  # ~20%


def jsonl_data(path: str | Path, train: int, heldout: int, pool: int, seed: int) -> SearchData:
    """Tasks from a JSONL file (module docstring); `train`/`heldout`/`pool` cap each part
    (a seeded shuffle picks which)."""
    if not Path(path).is_file():
        raise DataError(f"data.jsonl: {path} is not a file")
    splits: dict[str, list[tuple[Task, tuple[Message, ...]]]] = {"train": [], "heldout": []}
    try:
        for where, record in json_lines(path):
            task, split, demo = _task(where, record)
            split = split or ("heldout" if _heldout_by_hash(task.id) else "train")
            splits[split].append((task, demo))
    except ValueError as e:
        raise DataError(str(e)) from e
    if not splits["train"] and not splits["heldout"]:
        raise DataError(f"data.jsonl: {path} holds no tasks")
    rng = random.Random(seed)
    for part in splits.values():
        rng.shuffle(part)
    with_demo = [(t, d) for t, d in splits["train"] if d][:pool]
    pool_ids = {t.id for t, _ in with_demo}
    rest = [t for t, _ in splits["train"] if t.id not in pool_ids][:train]
    examples = {t.id: (*t.messages, *d) for t, d in with_demo}
    return SearchData(tuple(rest), tuple(t for t, _ in splits["heldout"][:heldout]), examples)

"""What `evaluate()` scores: an EvalItem, built from a Trajectory, a trace or a JSONL line.

Every source becomes a Trajectory plus reference fields, so a metric has one input
type and the same metric can score training rollouts, stored traces and conversations
exported from elsewhere (and can serve as a Reward, see metric.py). A conversation
without token ids becomes a text-only Trajectory (empty id lists).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracerl.types import Message, Task, Trajectory, Turn, assistant_message
from tracerl.util.jsonl import json_lines


@dataclass(frozen=True)
class EvalItem:
    """One thing to score: a trajectory and the reference fields it is checked against."""

    id: str
    trajectory: Trajectory
    reference: Mapping[str, Any] = field(default_factory=dict)

    def output_text(self) -> str:
        """The final assistant message's text (what answer-checking metrics read)."""
        turns = self.trajectory.turns
        return assistant_message(turns[-1]).content if turns else ""

    def messages(self) -> list[Message]:
        return self.trajectory.messages()

    def require(self, key: str) -> Any:
        """A reference field, or a clear error naming it and the fields there are."""
        if key not in self.reference:
            raise KeyError(f"item {self.id!r} has no reference field {key!r} "
                           f"(has: {sorted(self.reference)})")
        return self.reference[key]


def reference_of(traj: Trajectory) -> dict[str, Any]:
    """Reference fields of a training trajectory: its task's answer and metadata."""
    return {"answer": traj.task.answer, **traj.task.metadata}


def item_from_trajectory(traj: Trajectory, item_id: str | None = None) -> EvalItem:
    default_id = f"{traj.task.id}/g{traj.group_index}/s{traj.sample_index}"
    return EvalItem(item_id or default_id, traj, reference_of(traj))


def trajectory_from_messages(messages: Sequence[Message], task_id: str = "") -> Trajectory:
    """A text-only Trajectory: messages before the first assistant one are the task,
    each assistant message is a Turn, the messages after it its observations."""
    first = next((i for i, m in enumerate(messages) if m.role == "assistant"), len(messages))
    task = Task(id=task_id, messages=tuple(messages[:first]))
    turns: list[Turn] = []
    for msg in messages[first:]:
        if msg.role == "assistant":
            turns.append(Turn(action_ids=[], action_logprobs=[], action_text=msg.content,
                              tool_calls=list(msg.tool_calls)))
        else:
            turns[-1].observations.append(msg)
    return Trajectory(task=task, prompt_ids=[], turns=turns)


def item_from_record(record: Mapping[str, Any], where: str) -> EvalItem:
    """`{"messages": [...], ...reference fields}` (one JSONL line) -> EvalItem."""
    if not isinstance(record, Mapping) or not isinstance(record.get("messages"), list):
        raise ValueError(f"{where}: expected an object with a 'messages' list")
    try:
        messages = [Message.from_openai(m) for m in record["messages"]]
    except (ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{where}: bad message: {exc}") from exc
    item_id = str(record.get("id", record.get("trace_id", where)))
    reference = {k: v for k, v in record.items() if k != "messages"}
    return EvalItem(item_id, trajectory_from_messages(messages, item_id), reference)


def read_jsonl(path: str | Path) -> Iterator[EvalItem]:
    """Items of a JSONL file of OpenAI-format conversations (blank lines skipped)."""
    for where, record in json_lines(path):
        yield item_from_record(record, where)


def read_trace_store(path: str | Path, run: str | None = None) -> Iterator[EvalItem]:
    """Items rebuilt from a trace store (one per recorded trajectory, id = trace id)."""
    from tracerl.trace.replay import load_trajectory
    from tracerl.trace.store import TraceStore

    with TraceStore(path) as store:
        for summary in store.trajectories(run=run):
            traj = load_trajectory(store, summary.trace_id)
            yield EvalItem(summary.trace_id, traj, reference_of(traj))


def load_items(data: Any, run: str | None = None) -> list[EvalItem]:
    """Trajectories, EvalItems, a JSONL path, or a trace store path -> EvalItems."""
    if isinstance(data, (str, Path)):
        path = Path(data)
        if path.suffix == ".jsonl":
            return list(read_jsonl(path))
        if path.is_dir() or path.suffix in (".sqlite", ".db"):
            return list(read_trace_store(path, run))
        raise ValueError(f"evaluate data {path}: expected a .jsonl file, a .sqlite trace "
                         "store or a run directory")
    items = []
    for i, x in enumerate(data):
        if isinstance(x, EvalItem):
            items.append(x)
        elif isinstance(x, Trajectory):
            items.append(item_from_trajectory(x))
        else:
            raise TypeError(f"evaluate data[{i}] is a {type(x).__name__}; "
                            "expected a Trajectory or an EvalItem")
    return items

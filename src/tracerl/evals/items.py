"""What `evaluate()` scores: an EvalItem, built from a Trajectory, a trace or a JSONL line.

Every source becomes a Trajectory plus reference fields, so a metric has one input
type and the same metric can score training rollouts, stored traces and conversations
exported from elsewhere (and can serve as a Reward, see metric.py). A conversation
without token ids becomes a text-only Trajectory (empty id lists).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tracerl.evals.fault import MissingReference
from tracerl.types import (
    Message,
    Task,
    ToolCall,
    ToolResult,
    Trajectory,
    Turn,
    assistant_message,
    text_trajectory,
)
from tracerl.util.jsonl import json_lines

T = TypeVar("T")
MALFORMED_CALL = "malformed_call"
"""ToolResult.error of a call that could not be parsed (the rollout's name for it)."""


@dataclass(frozen=True)
class EvalItem:
    """One thing to score: a trajectory and the reference fields it is checked against.

    Views of the answer that several metrics need (its tokens, its JSON, its code) are
    computed once per item (`derived`); an item is a snapshot, so change the
    trajectory before scoring it, not between metrics.
    """

    id: str
    trajectory: Trajectory
    reference: Mapping[str, Any] = field(default_factory=dict)
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False,
                                     compare=False)

    def output_text(self) -> str:
        """The final assistant message's text (what answer-checking metrics read)."""
        text = self._derived.get("text")
        if text is None:
            turns = self.trajectory.turns
            text = self._derived["text"] = assistant_message(turns[-1]).content if turns else ""
        return str(text)

    def derived(self, key: str, compute: Callable[[str], T]) -> T:
        """`compute(answer text)`, computed once per item and key; the value is shared
        by every metric that asks, so it must not be mutated."""
        try:
            return self._derived[key]  # type: ignore[no-any-return]
        except KeyError:
            value = self._derived[key] = compute(self.output_text())
            return value

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """`compute()`, once per item and key: a view of the reference fields or of the
        trajectory that several metrics share (parsed reference calls, reference
        tokens). Keys share `derived`'s namespace; never mutate the value."""
        try:
            return self._derived[key]  # type: ignore[no-any-return]
        except KeyError:
            value = self._derived[key] = compute()
            return value

    def messages(self) -> list[Message]:
        return list(self.memo("messages", self.trajectory.messages))

    def require(self, key: str) -> Any:
        """A reference field; absent or None raises MissingReference (the data cannot
        judge the item, see fault.py), naming the field."""
        value = self.reference.get(key)
        if value is None:
            raise MissingReference(f"no reference field {key!r}" if key not in self.reference
                                   else f"reference field {key!r} is null")
        return value

    @property
    def task_id(self) -> str:
        return self.trajectory.task.id

    def tags(self) -> tuple[str, ...]:
        """The item's tags: reference field "tags" (a string or a list of strings)."""
        raw = self.reference.get("tags")
        if raw is None:
            return ()
        if isinstance(raw, str):
            return (raw,)
        if isinstance(raw, (list, tuple)) and all(isinstance(t, str) for t in raw):
            return tuple(dict.fromkeys(raw))
        raise ValueError(f"item {self.id!r}: 'tags' must be a string or a list of strings, "
                         f"got {raw!r:.80}")


def item_from_text(text: str, item_id: str = "item", **reference: Any) -> EvalItem:
    """An item whose one assistant turn says `text` (to score a plain string).

    >>> item_from_text("Paris", answer="paris").output_text()
    'Paris'
    """
    turn = Turn(action_ids=[], action_logprobs=[], action_text=text)
    task = Task(id=item_id, messages=(), metadata={})
    return EvalItem(item_id, Trajectory(task=task, prompt_ids=[], turns=[turn]), reference)


def reference_of(traj: Trajectory) -> dict[str, Any]:
    """Reference fields of a training trajectory: its task's answer and metadata."""
    return {"answer": traj.task.answer, **traj.task.metadata}


def item_from_trajectory(traj: Trajectory, item_id: str | None = None) -> EvalItem:
    default_id = f"{traj.task.id}/g{traj.group_index}/s{traj.sample_index}"
    return EvalItem(item_id or default_id, traj, reference_of(traj))


def _lenient_call(data: Any, index: int) -> ToolCall | ToolResult:
    """A ToolCall, or for one that does not parse the ToolResult a rollout records for a
    malformed call: the call is nameless (it matches nothing) and the reason is kept."""
    try:
        return ToolCall.from_openai(data)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        fn = data.get("function", data) if isinstance(data, Mapping) else {}
        name = fn.get("name", "") if isinstance(fn, Mapping) else ""
        raw_id = data.get("id") if isinstance(data, Mapping) else None
        call = ToolCall(name="", arguments={}, id=str(raw_id or f"malformed_{index}"))
        args = fn.get("arguments", "") if isinstance(fn, Mapping) else ""
        return ToolResult(call=call, content=f"Error: tool call {name!r}: {exc}\n{args!s:.2000}",
                          ok=False, error=MALFORMED_CALL)


def parse_message(data: Mapping[str, Any]) -> tuple[Message, list[ToolResult]]:
    """An OpenAI-format message whose malformed tool calls do not fail the message:
    what the policy wrote is judged (as a nameless call), not dropped with the item."""
    raw_calls = data.get("tool_calls") or ()
    if data.get("role") != "assistant" or not isinstance(raw_calls, list):
        return Message.from_openai(dict(data)), []
    parsed = [_lenient_call(c, i) for i, c in enumerate(raw_calls)]
    calls = tuple(p if isinstance(p, ToolCall) else p.call for p in parsed)
    msg = Message.from_openai({**data, "tool_calls": []})
    return Message(msg.role, msg.content, calls, msg.tool_call_id, msg.name), [
        p for p in parsed if isinstance(p, ToolResult)]


def item_from_record(record: Mapping[str, Any], where: str) -> EvalItem:
    """`{"messages": [...], ...reference fields}` (one JSONL line) -> EvalItem."""
    if not isinstance(record, Mapping) or not isinstance(record.get("messages"), list):
        raise ValueError(f"{where}: expected an object with a 'messages' list")
    messages: list[Message] = []
    malformed: dict[int, list[ToolResult]] = {}
    for i, m in enumerate(record["messages"]):
        try:
            msg, bad = parse_message(m)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ValueError(f"{where}: bad message {i}: {exc}") from exc
        messages.append(msg)
        if bad:
            malformed[i] = bad
    item_id = str(record.get("id", record.get("trace_id", where)))
    task = record.get("task_id", record.get("task"))
    reference = {k: v for k, v in record.items() if k != "messages"}
    traj = text_trajectory(messages, task if isinstance(task, str) else item_id, malformed)
    return EvalItem(item_id, traj, reference)


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

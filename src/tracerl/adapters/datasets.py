"""Prompt datasets as TRL and verl ship them, read as tracerl Tasks.

The layouts (JSONL or parquet, one prompt per row):

- TRL "prompt-only": `prompt` is a string (standard) or a list of chat messages
  (conversational); other columns (`solution`, `answer`, `ground_truth`, ...) ride along
  and reach TRL reward functions as keyword arguments.
- verl RL data (`examples/data_preprocess/*.py` there): `data_source`, `prompt` (chat
  messages), `ability`, `reward_model` = {"style": "rule", "ground_truth": ...},
  `extra_info` = {"split", "index", ...}.
- SkyRL's data is verl's with `env_class` and `reward_spec` = {"method", "ground_truth"}.

`read_prompt_dataset(path)` gives one Task per row: the prompt as Messages, the answer
from the first of `answer_keys` present (dotted keys reach into nested columns, so
`reward_model.ground_truth` is verl's), every other column in `Task.metadata`, and an
id from `id_key` (default: verl's `extra_info.index`, else the row number).
`prompt_family(...)` turns such tasks into a TaskFamily that `tracerl train` can take.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tracerl.envs.family import TaskListFamily
from tracerl.envs.tool_env import ToolEnv
from tracerl.rewards.base import Reward
from tracerl.types import Message, Task, Trajectory
from tracerl.util.jsonl import json_lines

ANSWER_KEYS = ("reward_model.ground_truth", "reward_spec.ground_truth", "ground_truth",
               "answer", "solution")
ID_KEYS = ("extra_info.index", "id", "task_id")
MISSING = object()


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a .jsonl, .json (an array) or .parquet file, as dicts."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no dataset file {path}")
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # the `adapters` extra; only parquet needs it

        return list(pq.read_table(path).to_pylist())
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ValueError(f"{path}: a .json dataset must be an array of objects")
        return data
    if path.suffix == ".jsonl":
        return [row for _, row in json_lines(path)]
    raise ValueError(f"{path}: unknown dataset format {path.suffix!r} "
                     "(expected .jsonl, .json or .parquet)")


def lookup(row: dict[str, Any], key: str) -> Any:
    """`row[key]`, where a dotted key reaches into nested objects; MISSING if absent."""
    value: Any = row
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return MISSING
        value = value[part]
    return value


def prompt_messages(prompt: Any, where: str) -> tuple[Message, ...]:
    """A TRL/verl prompt (a string, or chat messages) as Messages."""
    if isinstance(prompt, str):
        return (Message("user", prompt),)
    if isinstance(prompt, Sequence) and prompt and all(isinstance(m, dict) for m in prompt):
        try:
            return tuple(Message.from_openai(m) for m in prompt)
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"{where}: bad message in 'prompt': {e}") from e
    raise ValueError(f"{where}: 'prompt' must be a string or a non-empty list of messages, "
                     f"got {type(prompt).__name__}")


def _plain(value: Any) -> Any:
    """Metadata that survives JSON (parquet gives numpy scalars through pyarrow rarely)."""
    return json.loads(json.dumps(value, default=str))


def task_from_row(row: dict[str, Any], index: int, *, prompt_key: str = "prompt",
                  answer_keys: Sequence[str] = ANSWER_KEYS,
                  id_key: str | None = None, source: str = "dataset") -> Task:
    where = f"{source} row {index}"
    if not isinstance(row, dict):
        raise ValueError(f"{where}: a row must be an object, got {type(row).__name__}")
    prompt = lookup(row, prompt_key)
    if prompt is MISSING:
        raise ValueError(f"{where}: no '{prompt_key}' column (columns: {sorted(row)})")
    answer = next((v for v in (lookup(row, k) for k in answer_keys) if v is not MISSING),
                  None)
    ident = next((v for v in (lookup(row, k) for k in ([id_key] if id_key else ID_KEYS))
                  if v is not MISSING and v is not None), index)
    prefix = row.get("data_source") or source
    metadata = {k: _plain(v) for k, v in row.items() if k != prompt_key}
    return Task(id=f"{prefix}-{ident}", messages=prompt_messages(prompt, where),
                answer=answer, metadata=metadata)


def read_prompt_dataset(path: str | Path, *, prompt_key: str = "prompt",
                        answer_keys: Sequence[str] = ANSWER_KEYS,
                        id_key: str | None = None) -> list[Task]:
    """One Task per row of a TRL or verl prompt dataset (see the module docstring)."""
    rows = read_rows(path)
    tasks = [task_from_row(r, i, prompt_key=prompt_key, answer_keys=answer_keys,
                           id_key=id_key, source=Path(path).stem) for i, r in enumerate(rows)]
    seen: dict[str, int] = {}
    for i, t in enumerate(tasks):
        if t.id in seen:
            raise ValueError(f"{path}: rows {seen[t.id]} and {i} share the task id {t.id!r} "
                             "(pass id_key=...)")
        seen[t.id] = i
    return tasks


def is_heldout(task: Task, fraction: float) -> bool:
    """A stable split by task id (a hash, so it never depends on row order)."""
    return hashlib.sha256(task.id.encode()).digest()[0] < int(256 * fraction)


class ComputeScoreReward:
    """A verl-style `compute_score(data_source, solution_str, ground_truth, extra_info)`
    as a tracerl Reward (a dict result is read at its "score" key, as verl does)."""

    def __init__(self, compute_score: Callable[..., Any], name: str = "compute_score") -> None:
        self.compute_score = compute_score
        self.name = name

    def __call__(self, trajectory: Trajectory) -> float | None:
        meta = trajectory.task.metadata
        out = self.compute_score(data_source=meta.get("data_source"),
                                 solution_str=trajectory.final_text,
                                 ground_truth=trajectory.task.answer,
                                 extra_info=meta.get("extra_info"))
        if isinstance(out, dict):
            out = out.get("score")
        return None if out is None else float(out)


def prompt_family(tasks: Sequence[Task], reward: Reward, *, heldout_fraction: float = 0.1,
                  name: str = "prompts") -> TaskListFamily:
    """Single-turn tasks (the env ends the episode at the first answer) as a TaskFamily,
    split train / held-out by task id."""
    heldout = [t for t in tasks if is_heldout(t, heldout_fraction)]
    train = [t for t in tasks if not is_heldout(t, heldout_fraction)]
    if not heldout or not train:
        raise ValueError(f"{len(tasks)} tasks split into {len(train)} train and "
                         f"{len(heldout)} held-out: give more tasks or another fraction")
    return TaskListFamily(lambda: ToolEnv([]), train, heldout, reward, name=name)

"""Any tracerl Reward as a TRL reward function.

TRL calls `reward_func(prompts, completions, completion_ids, **dataset_columns)` and
reads a list of floats, where None skips the sample. We build a minimal Trajectory
per sample (a Task from the prompt and the dataset columns, one Turn whose
action_text is the completion, with empty token ids), call the Reward, and return
its score (a Reward with a `batch` method scores all samples of the call at once). A
reward that raises is contained: the sample gets None and the failure is logged and
counted on the function (`.failures`), never a crash of the step.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tracerl.rewards.base import BatchReward, Reward
from tracerl.types import Message, Task, Trajectory, Turn

log = logging.getLogger(__name__)
TrlRewardFunc = Callable[..., list[float | None]]


def _text(item: Any) -> str:
    """A TRL prompt/completion: plain text, or a list of chat messages."""
    if isinstance(item, str):
        return item
    if isinstance(item, Sequence):
        return "".join(str(m.get("content") or "") for m in item if isinstance(m, dict))
    raise TypeError(f"expected str or list of messages, got {type(item).__name__}")


def _messages(prompt: Any) -> tuple[Message, ...]:
    if isinstance(prompt, str):
        return (Message("user", prompt),)
    return tuple(Message.from_openai(m) for m in prompt)


def trajectory_from_sample(prompt: Any, completion: Any, columns: dict[str, Any],
                           index: int) -> Trajectory:
    """The minimal Trajectory a Reward needs for one TRL sample."""
    answer = columns.get("answer", columns.get("solution"))
    task_id = str(columns.get("id", columns.get("task_id", f"trl-{index}")))
    metadata = {k: v for k, v in columns.items() if k not in ("answer",)}
    task = Task(id=task_id, messages=_messages(prompt), answer=answer, metadata=metadata)
    turn = Turn(action_ids=[], action_logprobs=[], action_text=_text(completion))
    return Trajectory(task=task, prompt_ids=[], turns=[turn])


def trl_reward_func(reward: Reward, *, max_workers: int = 8) -> TrlRewardFunc:
    """Adapt `reward` to TRL's reward-function signature (scored in parallel threads)."""
    if not callable(reward):
        raise TypeError(f"reward must be callable, got {type(reward).__name__}")
    lock = threading.Lock()

    def reward_func(prompts: Sequence[Any], completions: Sequence[Any],
                    completion_ids: Any = None, **columns: Any) -> list[float | None]:
        if len(prompts) != len(completions):
            raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
        per_sample = [_column_slice(columns, i, len(prompts)) for i in range(len(prompts))]

        def score(i: int) -> float | None:
            try:
                traj = trajectory_from_sample(prompts[i], completions[i], per_sample[i], i)
                out = reward(traj)
                return None if out is None else float(out)
            except Exception:
                with lock:
                    reward_func.failures += 1  # type: ignore[attr-defined]
                log.exception("reward %s failed on sample %d", _name(reward), i)
                return None

        if isinstance(reward, BatchReward):
            batch = _batch(reward, prompts, completions, per_sample)
            if batch is not None:
                return batch
        with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(prompts)))) as ex:
            return list(ex.map(score, range(len(prompts))))

    reward_func.__name__ = _name(reward)
    reward_func.failures = 0  # type: ignore[attr-defined]
    return reward_func


def _batch(reward: BatchReward, prompts: Sequence[Any], completions: Sequence[Any],
           per_sample: list[dict[str, Any]]) -> list[float | None] | None:
    """All samples in one `batch` call; None (score one by one) if that call failed."""
    try:
        trajs = [trajectory_from_sample(p, c, cols, i)
                 for i, (p, c, cols) in enumerate(zip(prompts, completions, per_sample,
                                                      strict=True))]
        scores = reward.batch(trajs)
        if len(scores) != len(trajs):
            raise ValueError(f"batch returned {len(scores)} scores for {len(trajs)} samples")
        return [None if s is None else float(s) for s in scores]
    except Exception:
        log.exception("reward %s: batch scoring failed; scoring one by one", _name(reward))
        return None


def _name(reward: Any) -> str:
    return str(getattr(reward, "name", None) or getattr(reward, "__name__", "reward"))


def _column_slice(columns: dict[str, Any], i: int, n: int) -> dict[str, Any]:
    """Row i of the dataset columns TRL passes as lists (scalars are kept as they are)."""
    out = {}
    for key, value in columns.items():
        if key in ("trainer_state",):
            continue
        is_column = isinstance(value, list | tuple) and len(value) == n
        out[key] = value[i] if is_column else value
    return out

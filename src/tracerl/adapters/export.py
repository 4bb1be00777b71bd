"""Finished trajectories as conversational JSONL that TRL's SFT and DPO trainers load.

TRL's dataset formats (its `trl.data_utils`):
- SFT, conversational language modeling: `{"messages": [...], "tools": "<JSON>"}`;
  `tools` (the schemas the policy was shown, as a JSON string, which TRL's SFT
  tokenisation parses) is written only when there were any;
- DPO, conversational preference with an explicit prompt:
  `{"prompt": [...], "chosen": [...], "rejected": [...]}`.

Assistant turns are written one of two ways (`calls=`):
- "text" (default): the content exactly as the policy wrote it, tool-call blocks
  included, which is what the chat template renders back to the sampled text (tracerl's
  convention, rollout/render.py): SFT on it trains the policy's own format;
- "openai": content without the blocks and `tool_calls` in OpenAI's form (arguments as a
  JSON string), for templates that render structured calls.

What is exported: SFT takes the trajectories that reached `min_reward` (rejection-sampling
fine-tuning); DPO takes, per group, the best and the worst judged trajectory when their
rewards differ. Unjudged and failed trajectories are never exported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from tracerl.tools.hermes import parse_tool_calls
from tracerl.types import Group, Message, Status, Trajectory

CallStyle = Literal["text", "openai"]


def message_dict(m: Message, calls: CallStyle = "text") -> dict[str, Any]:
    if m.role != "assistant":
        return m.to_openai()
    if calls == "text":
        return {"role": "assistant", "content": m.content}
    parsed = parse_tool_calls(m.content)
    out = Message("assistant", parsed.content, tool_calls=m.tool_calls or tuple(parsed.calls))
    return out.to_openai()


def conversation(t: Trajectory, calls: CallStyle = "text") -> list[dict[str, Any]]:
    return [message_dict(m, calls) for m in t.messages()]


def _judged(t: Trajectory) -> bool:
    return t.outcome_reward is not None and t.status is not Status.ERROR and bool(t.turns)


def sft_records(trajectories: Iterable[Trajectory], min_reward: float = 1.0,
                calls: CallStyle = "text") -> list[dict[str, Any]]:
    """One `{"messages": ...}` record per judged trajectory with reward >= min_reward."""
    out = []
    for t in trajectories:
        if not _judged(t) or float(t.outcome_reward or 0.0) < min_reward:
            continue
        record: dict[str, Any] = {"messages": conversation(t, calls)}
        if t.tools:
            record["tools"] = json.dumps(t.tools)
        out.append(record)
    return out


def dpo_records(groups: Iterable[Group], calls: CallStyle = "text") -> list[dict[str, Any]]:
    """Per group, the best judged trajectory as chosen and the worst as rejected (groups
    whose judged rewards are all equal give no pair). Both continue the task's prompt."""
    out = []
    for g in groups:
        judged = sorted((t for t in g.trajectories if _judged(t)),
                        key=lambda t: float(t.outcome_reward or 0.0))
        if len(judged) < 2 or judged[0].outcome_reward == judged[-1].outcome_reward:
            continue
        best, worst = judged[-1], judged[0]
        n = len(g.task.messages)
        out.append({"prompt": [message_dict(m, calls) for m in g.task.messages],
                    "chosen": conversation(best, calls)[n:],
                    "rejected": conversation(worst, calls)[n:]})
    return out


def write_jsonl(records: Sequence[dict[str, Any]], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path

"""The data that flows through the loop: Task, Message, ToolCall, Turn, Trajectory, Group.

The Trajectory is the single source of truth (shared/DESIGN.md): the rollout runner
writes it, rewards, credit, losses, tracing and evals read it. Token ids are stored
exactly as sampled (token-in, token-out); text is kept beside them for rewards and
humans, never re-tokenised for training.

Layout of one trajectory's token stream:

    prompt_ids | turn[0].action_ids | turn[0].observation_ids | turn[1].action_ids | ...
      masked        trained on              masked                  trained on

`response_ids()` is everything after the prompt; `loss_mask()` is 1 exactly on the
sampled action tokens.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class ToolCall:
    """One call of a tool, as the policy wrote it (OpenAI `tool_calls` entry)."""

    name: str
    arguments: dict[str, Any]
    id: str = ""

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": json.dumps(self.arguments)},
        }

    @classmethod
    def from_openai(cls, data: dict[str, Any]) -> ToolCall:
        fn = data.get("function", data)
        args = fn.get("arguments", {})
        if isinstance(args, str):
            args = json.loads(args) if args.strip() else {}
        if not isinstance(args, dict):
            kind = type(args).__name__
            raise ValueError(f"tool call arguments must be a JSON object, got {kind}")
        return cls(name=str(fn["name"]), arguments=args, id=str(data.get("id", "")))


@dataclass(frozen=True)
class Message:
    """One chat message in OpenAI format."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"Message.role must be one of {ROLES}, got {self.role!r}")
        if not isinstance(self.content, str):
            raise TypeError(f"Message.content must be str, got {type(self.content).__name__}")

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [c.to_openai() for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            out["name"] = self.name
        return out

    @classmethod
    def from_openai(cls, data: dict[str, Any]) -> Message:
        if "role" not in data:
            raise ValueError(f"message has no 'role': {data!r}")
        content = data.get("content")
        if isinstance(content, list):  # OpenAI content parts: keep the text ones
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        calls = tuple(ToolCall.from_openai(c) for c in data.get("tool_calls") or ())
        return cls(
            role=data["role"],
            content=content or "",
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
        )


@dataclass(frozen=True)
class Task:
    """One problem instance: the opening messages, the ground truth and metadata."""

    id: str
    messages: tuple[Message, ...]
    answer: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)


class Status(enum.StrEnum):
    """How a trajectory ended."""

    DONE = "done"  # the env terminated the episode (final answer given)
    TRUNCATED = "truncated"  # max turns or max tokens reached first
    ERROR = "error"  # an infrastructure failure; never scored as a wrong answer


@dataclass
class ToolResult:
    """What running one ToolCall produced (the env's record, for metrics and traces)."""

    call: ToolCall
    content: str
    """The text returned to the policy (the tool's output or a readable error)."""
    ok: bool = True
    error: str | None = None
    """Error class when not ok: "malformed_call", "unknown_tool", "bad_arguments",
    "tool_raised", "timeout", "blocked"."""
    started_at: float = 0.0
    ended_at: float = 0.0
    guard: tuple[Any, ...] = ()
    """Guard decisions (tracerl.guard.GuardDecision) on the call and on its output."""

    @property
    def guard_penalty(self) -> float:
        return float(sum(getattr(d, "penalty", 0.0) for d in self.guard))


@dataclass
class Turn:
    """One policy action and what the environment answered to it."""

    action_ids: list[int]
    """Token ids the policy sampled in this turn (trained on)."""
    action_logprobs: list[float]
    """Behaviour log-probabilities of `action_ids` under the sampling policy."""
    action_text: str
    """`action_ids` decoded with special tokens; never re-tokenised."""
    observation_ids: list[int] = field(default_factory=list)
    """Template and observation tokens appended after the action (masked out)."""
    observations: list[Message] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    reward: float | None = None
    """Optional per-turn reward from the env or a step evaluator."""
    info: dict[str, Any] = field(default_factory=dict)
    started_at: float = 0.0
    ended_at: float = 0.0
    text: str | None = None
    """`action_ids` decoded without special tokens (what rewards read); None: not
    recorded, `action_text` stands in."""
    policy_version: int = 0
    """The policy version (updates applied to the sampler's weights) that sampled this
    turn. In an async run a partial rollout continues across a weight sync, so a later
    turn may be newer than the trajectory's first."""

    @property
    def readable_text(self) -> str:
        return self.text if self.text is not None else self.action_text

    def __post_init__(self) -> None:
        if len(self.action_ids) != len(self.action_logprobs):
            raise ValueError(
                f"Turn.action_logprobs has {len(self.action_logprobs)} entries "
                f"for {len(self.action_ids)} action ids"
            )


@dataclass
class Trajectory:
    """A whole multi-turn episode for one Task, as token ids plus readable messages."""

    task: Task
    prompt_ids: list[int]
    turns: list[Turn] = field(default_factory=list)
    status: Status = Status.DONE
    outcome_reward: float | None = None
    """Outcome reward; None means it could not be judged (sample masked, counted)."""
    reward_parts: dict[str, float | None] = field(default_factory=dict)
    advantages: list[float] | None = None
    """Per response token (aligned with `response_ids()`), written by credit."""
    metrics: dict[str, float] = field(default_factory=dict)
    group_index: int = 0
    sample_index: int = 0
    policy_version: int = 0
    """The policy version that sampled the first turn (the oldest; see Turn.policy_version)."""
    error: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    """JSON schemas of the tools described to the policy in its prompt (the chat
    template renders them, or the default tool prompt); empty when none were."""

    def response_ids(self) -> list[int]:
        out: list[int] = []
        for t in self.turns:
            out.extend(t.action_ids)
            out.extend(t.observation_ids)
        return out

    def token_ids(self) -> list[int]:
        return self.prompt_ids + self.response_ids()

    def loss_mask(self) -> list[int]:
        """1 on sampled action tokens, 0 on observation tokens; aligned with response_ids."""
        out: list[int] = []
        for t in self.turns:
            out.extend([1] * len(t.action_ids))
            out.extend([0] * len(t.observation_ids))
        return out

    def turn_advantages(self) -> list[list[float]] | None:
        """Each turn's action-token advantages, cut from `advantages`; None when credit
        never wrote any."""
        if self.advantages is None:
            return None
        out, at = [], 0
        for t in self.turns:
            out.append(self.advantages[at:at + len(t.action_ids)])
            at += len(t.action_ids) + len(t.observation_ids)
        return out

    def behaviour_logprobs(self) -> list[float]:
        """Behaviour logprobs aligned with response_ids (0.0 on masked tokens)."""
        out: list[float] = []
        for t in self.turns:
            out.extend(t.action_logprobs)
            out.extend([0.0] * len(t.observation_ids))
        return out

    def messages(self) -> list[Message]:
        """The conversation as OpenAI-format messages (prompt, actions, observations)."""
        out = list(self.task.messages)
        for t in self.turns:
            out.append(assistant_message(t))
            out.extend(t.observations)
        return out

    @property
    def num_action_tokens(self) -> int:
        return sum(len(t.action_ids) for t in self.turns)

    @property
    def final_text(self) -> str:
        """The last action's text without special tokens (`<|im_end|>` and the like)."""
        return self.turns[-1].readable_text if self.turns else ""


def assistant_message(turn: Turn) -> Message:
    """The assistant message a turn's action renders to."""
    return Message(
        role="assistant",
        content=turn.info.get("content", turn.action_text),
        tool_calls=tuple(turn.tool_calls),
    )


def text_trajectory(messages: Sequence[Message], task_id: str = "",
                    malformed: Mapping[int, Sequence[ToolResult]] | None = None,
                    answer: Any = None, metadata: Mapping[str, Any] | None = None
                    ) -> Trajectory:
    """A text-only Trajectory: messages before the first assistant one are the task,
    each assistant message is a Turn, the messages after it its observations.
    `malformed[i]`: the malformed-call results of message i (see `parse_message`)."""
    first = next((i for i, m in enumerate(messages) if m.role == "assistant"), len(messages))
    task = Task(id=task_id, messages=tuple(messages[:first]), answer=answer,
                metadata=dict(metadata or {}))
    turns: list[Turn] = []
    for i, msg in enumerate(messages[first:], start=first):
        if msg.role == "assistant":
            turns.append(Turn(action_ids=[], action_logprobs=[], action_text=msg.content,
                              tool_calls=list(msg.tool_calls),
                              tool_results=list((malformed or {}).get(i, ()))))
        else:
            turns[-1].observations.append(msg)
    return Trajectory(task=task, prompt_ids=[], turns=turns)


@dataclass
class Group:
    """The trajectories sampled for one Task (the unit of group baselines)."""

    task: Task
    trajectories: list[Trajectory]

    def rewards(self) -> list[float | None]:
        return [t.outcome_reward for t in self.trajectories]

"""The prompt being optimized: named text slots plus a few-shot block, and how they
reach a rollout.

Slots, by where they go in the conversation the policy sees:

    system       a system message opening the chat (the renderer appends the tool
                 description after it for templates without native tools)
    prefix       text put before the task's last user message
    instruction  text put after the task's last user message
    examples     the few-shot block: oracle demonstrations of example tasks, as real
                 chat turns (user, assistant tool calls, tool results, answer) before
                 the task

`apply_prompt` writes them into a Task's opening messages. Every built-in env opens
with `task.messages`, so the prompted Task goes through the family's own env and the
same RolloutRunner as training; the Trajectory records the prompted messages, so its
trace and a later SFT or RL run see exactly what was scored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tracerl.types import Message, Task

TEXT_SLOTS: tuple[str, ...] = ("system", "prefix", "instruction")


class PromptError(ValueError):
    """A prompt names an unknown slot or an example that is not in the pool."""


@dataclass(frozen=True)
class Prompt:
    """Text slots (`TEXT_SLOTS`) and the ids of the few-shot examples, in order."""

    system: str = ""
    prefix: str = ""
    instruction: str = ""
    examples: tuple[str, ...] = ()

    def slot(self, name: str) -> str:
        if name not in TEXT_SLOTS:
            raise PromptError(f"unknown prompt slot {name!r}; slots: {TEXT_SLOTS}")
        return str(getattr(self, name))

    def with_slot(self, name: str, text: str) -> Prompt:
        self.slot(name)
        return dataclasses.replace(self, **{name: text})

    def with_examples(self, ids: Sequence[str]) -> Prompt:
        return dataclasses.replace(self, examples=tuple(ids))

    def to_dict(self) -> dict[str, object]:
        return {"system": self.system, "prefix": self.prefix,
                "instruction": self.instruction, "examples": list(self.examples)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Prompt:
        unknown = sorted(set(data) - {*TEXT_SLOTS, "examples"})
        if unknown:
            raise PromptError(f"unknown prompt slot {unknown[0]!r}; slots: "
                              f"{(*TEXT_SLOTS, 'examples')}")
        texts = {k: str(data.get(k) or "") for k in TEXT_SLOTS}
        examples = data.get("examples") or ()
        if isinstance(examples, str) or not isinstance(examples, Sequence):
            raise PromptError(f"prompt examples must be a list of task ids, got {examples!r}")
        return cls(**texts, examples=tuple(str(e) for e in examples))

    def key(self) -> str:
        """A stable identity (two prompts with the same slots score the same)."""
        return repr(sorted(self.to_dict().items()))


def apply_prompt(prompt: Prompt, task: Task,
                 examples: Mapping[str, Sequence[Message]]) -> Task:
    """`task` with the prompt written into its opening messages.

    `examples` maps an example id to its whole conversation (the example task's
    opening messages and its demonstration). The task's own messages are kept: the
    prefix and instruction wrap its last user message, and a system message the task
    already has is extended by the system slot (not replaced).
    """
    messages = list(task.messages)
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if last_user is not None and (prompt.prefix or prompt.instruction):
        m = messages[last_user]
        content = "\n\n".join(p for p in (prompt.prefix, m.content, prompt.instruction) if p)
        messages[last_user] = dataclasses.replace(m, content=content)
    shots: list[Message] = []
    for ex in prompt.examples:
        if ex not in examples:
            raise PromptError(f"prompt example {ex!r} is not in the example pool")
        shots.extend(examples[ex])
    system: list[Message] = []
    if messages and messages[0].role == "system":
        head = messages.pop(0)
        text = "\n\n".join(p for p in (prompt.system, head.content) if p)
        system = [dataclasses.replace(head, content=text)]
    elif prompt.system:
        system = [Message("system", prompt.system)]
    return dataclasses.replace(task, messages=tuple(system + shots + messages))


def render_prompt(prompt: Prompt, examples: Mapping[str, Sequence[Message]]) -> str:
    """The prompt as readable text (best_prompt.txt): each non-empty slot under its name,
    then the few-shot conversations."""
    parts = [f"## {name}\n{prompt.slot(name)}" for name in TEXT_SLOTS if prompt.slot(name)]
    for ex in prompt.examples:
        turns = "\n".join(f"[{m.role}] {m.content}" for m in examples.get(ex, ()))
        parts.append(f"## example {ex}\n{turns}")
    return "\n\n".join(parts or ["(the empty prompt: every slot empty, no examples)"]) + "\n"

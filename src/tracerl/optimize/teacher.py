"""The teacher as the optimizers see it: one chat reply per call (no torch here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tracerl.types import Message


@dataclass(frozen=True)
class TeacherSettings:
    max_tokens: int = 160
    """Tokens a teacher reply may use at most."""
    temperature: float = 0.7
    """Sampling temperature of teacher replies (variety between proposals)."""


class Teacher(Protocol):
    """The optimizer's model: one chat reply per call, metered and cached."""

    name: str

    def reply(self, messages: Sequence[Message], settings: TeacherSettings,
              replica: int = 0) -> str: ...

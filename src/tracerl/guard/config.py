"""How the Guard acts on findings: one Rule (action + score threshold) per scanner,
separately for tool calls (what the policy wants to run) and observations (what the
environment feeds back to the policy).

Defaults follow the threat model of issue 6: a tool call that injects code or carries
a secret is blocked before it runs; an observation has already happened, so injected
instructions, secrets and PII in it are redacted before the policy reads them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Action(enum.StrEnum):
    """What the Guard does with a finding, from weakest to strongest."""

    OFF = "off"  # the scanner does not run
    FLAG = "flag"  # counted and traced, text unchanged
    REDACT = "redact"  # the span is replaced by a placeholder
    BLOCK = "block"  # tool call: not executed; observation: withheld

    @property
    def severity(self) -> int:
        return _SEVERITY[self]


_SEVERITY = {Action.OFF: 0, Action.FLAG: 1, Action.REDACT: 2, Action.BLOCK: 3}


@dataclass(frozen=True)
class Rule:
    """The action for one scanner and the least score a finding needs to trigger it."""

    action: Action
    min_score: float = 0.5

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "action", Action(self.action))
        except ValueError:
            raise ValueError(
                f"Rule.action must be one of {[a.value for a in Action]}, got {self.action!r}"
            ) from None
        if not 0.0 <= self.min_score <= 1.0:
            raise ValueError(f"Rule.min_score must be in [0, 1], got {self.min_score}")

    @classmethod
    def parse(cls, value: Any, where: str) -> Rule:
        """A Rule from "block" or {"action": "block", "min_score": 0.7} (YAML form)."""
        if isinstance(value, Rule):
            return value
        if isinstance(value, str):
            return cls(value)  # type: ignore[arg-type]  # __post_init__ converts and checks
        if isinstance(value, Mapping):
            unknown = set(value) - {"action", "min_score"}
            if unknown:
                raise ValueError(f"{where}: unknown rule fields {sorted(unknown)}")
            return cls(value["action"], float(value.get("min_score", 0.5)))
        raise ValueError(f"{where}: expected an action name or a mapping, got {value!r}")


TOOL_CALL_RULES: Mapping[str, Rule] = {
    "jailbreak": Rule(Action.FLAG),
    "code_injection": Rule(Action.BLOCK),
    "secrets": Rule(Action.BLOCK),
    "pii": Rule(Action.FLAG),
    "invisible": Rule(Action.REDACT),
}
OBSERVATION_RULES: Mapping[str, Rule] = {
    "jailbreak": Rule(Action.REDACT),
    "code_injection": Rule(Action.FLAG),
    "secrets": Rule(Action.REDACT),
    "pii": Rule(Action.REDACT),
    "invisible": Rule(Action.REDACT),
}


@dataclass(frozen=True)
class GuardConfig:
    """Per-scanner rules for tool calls and observations, and the reward consequences."""

    tool_call: Mapping[str, Rule] = field(default_factory=lambda: dict(TOOL_CALL_RULES))
    """Rule per scanner name for tool-call arguments; missing scanners are off."""
    observation: Mapping[str, Rule] = field(default_factory=lambda: dict(OBSERVATION_RULES))
    """Rule per scanner name for observation text; missing scanners are off."""
    block_penalty: float = 1.0
    """Amount the rollout may subtract from the reward when a tool call is blocked."""
    flag_penalty: float = 0.0
    """Amount it may subtract when findings were only flagged or redacted."""
    fail_closed: bool = True
    """A scanner that raises counts as a block where its rule is BLOCK (else a flag)."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GuardConfig:
        """Build from the YAML form: {tool_call: {secrets: block}, observation: {...}, ...}."""
        known = {"tool_call", "observation", "block_penalty", "flag_penalty", "fail_closed"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(
                f"guard config: unknown fields {sorted(unknown)}; known: {sorted(known)}"
            )
        kwargs: dict[str, Any] = {
            k: data[k] for k in known - {"tool_call", "observation"} if k in data
        }
        for target, defaults in (
            ("tool_call", TOOL_CALL_RULES),
            ("observation", OBSERVATION_RULES),
        ):
            rules = dict(defaults)
            for name, value in (data.get(target) or {}).items():
                rules[name] = Rule.parse(value, f"guard.{target}.{name}")
            kwargs[target] = rules
        return cls(**kwargs)

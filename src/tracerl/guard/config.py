"""How the Guard acts on findings: one Rule (action + score threshold) per scanner,
separately for tool calls (what the policy wants to run) and observations (what the
environment feeds back to the policy).

Defaults follow the threat model of issue 6: a tool call that injects code or carries
a secret is blocked before it runs; an observation has already happened, so injected
instructions, secrets and PII in it are redacted before the policy reads them.

Thresholds by where the text comes from (issue 31). Tool output and the documents a tool
retrieves are almost always benign and full of instructions to people, code and quoted
commands: the jailbreak rule there fires at 0.5, where the rules and the learned detector
together flag 0.3% of held-out real text (READMEs, manuals, docstrings, translations,
tool output). A user message is where jailbreaks are typed: the `prompt` rules flag a
weaker detector score (PROMPT_MIN_SCORE, where rules and detector fire on 1% of held-out
real text), and only flag by default, since a user's own request is counted, not rewritten.

GuardConfig is plain typed data: the training config holds it as `guard`, and the
generic config loader (tracerl.train.configlib) reads it from YAML and `key=value`
(`guard.tool_call.secrets.action=block`). This module imports nothing from train/.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Literal, get_args


class Action(enum.StrEnum):
    """What the Guard does with a finding, from weakest to strongest."""

    OFF = "off"  # rule: the scanner does not run; decision: nothing triggered
    FLAG = "flag"  # counted and traced, text unchanged
    REDACT = "redact"  # the span is replaced by a placeholder
    BLOCK = "block"  # tool call: not executed; observation: withheld

    @property
    def severity(self) -> int:
        return _SEVERITY[self]


_SEVERITY = {Action.OFF: 0, Action.FLAG: 1, Action.REDACT: 2, Action.BLOCK: 3}

ActionName = Literal["off", "flag", "redact", "block"]
"""Action's values as a config spells them (a Literal the config loader checks)."""
ACTION_NAMES: tuple[str, ...] = get_args(ActionName)


@dataclass(frozen=True)
class Rule:
    """What the Guard does with one scanner's findings on one target."""

    action: ActionName = "flag"
    """off (scanner not run), flag (counted and traced), redact (span replaced by a
    placeholder) or block (tool call not run, tool output withheld)."""
    min_score: float = 0.5
    """Least finding score (0 to 1) that triggers the action."""

    def __post_init__(self) -> None:
        if self.action not in ACTION_NAMES:
            raise ValueError(f"action must be one of {list(ACTION_NAMES)}, got {self.action!r}")
        # Stored as the plain string (an Action member is accepted too), so a config
        # holding a Rule stays plain data for YAML.
        object.__setattr__(self, "action", Action(self.action).value)
        if not 0.0 <= self.min_score <= 1.0:
            raise ValueError(f"min_score must be in [0, 1], got {self.min_score}")


@dataclass(frozen=True)
class ToolCallRules:
    """One Rule per built-in scanner for tool-call arguments, checked before the tool runs."""

    jailbreak: Rule = Rule("flag")
    """Jailbreak and prompt-injection phrasing."""
    code_injection: Rule = Rule("block")
    """Destructive commands, shell, SQL and code injection."""
    secrets: Rule = Rule("block")
    """API keys, tokens, private keys and passwords."""
    pii: Rule = Rule("flag")
    """E-mail addresses, phone, card, IBAN and ID numbers, IP addresses."""
    invisible: Rule = Rule("redact")
    """Invisible and bidirectional-control characters."""


@dataclass(frozen=True)
class ObservationRules:
    """One Rule per built-in scanner for tool output, checked before the policy reads it."""

    jailbreak: Rule = Rule("redact")
    """Jailbreak and prompt-injection phrasing (indirect injection)."""
    code_injection: Rule = Rule("flag")
    """Destructive commands, shell, SQL and code injection."""
    secrets: Rule = Rule("redact")
    """API keys, tokens, private keys and passwords."""
    pii: Rule = Rule("redact")
    """E-mail addresses, phone, card, IBAN and ID numbers, IP addresses."""
    invisible: Rule = Rule("redact")
    """Invisible and bidirectional-control characters."""


PROMPT_MIN_SCORE = 0.307
"""The detector probability at which a user message is flagged: the shipped detector's
`prompt_p` (guard_training/guard_model/train_mil.py `--real` calibrates both)."""


@dataclass(frozen=True)
class PromptRules:
    """One Rule per built-in scanner for user messages (the task's prompt), checked when
    an episode starts."""

    jailbreak: Rule = Rule("flag", PROMPT_MIN_SCORE)
    """Jailbreaks, instruction overrides and prompt-extraction requests."""
    code_injection: Rule = Rule("off")
    """Destructive commands, shell, SQL and code injection (users paste code: off)."""
    secrets: Rule = Rule("flag")
    """API keys, tokens, private keys and passwords."""
    pii: Rule = Rule("off")
    """E-mail addresses, phone, card, IBAN and ID numbers, IP addresses."""
    invisible: Rule = Rule("flag")
    """Invisible and bidirectional-control characters (hidden instructions)."""


def rules_by_scanner(rules: ToolCallRules | ObservationRules | PromptRules) -> dict[str, Rule]:
    """{scanner name: Rule} of one target's section."""
    return {f.name: getattr(rules, f.name) for f in dataclasses.fields(rules)}


@dataclass(frozen=True)
class GuardConfig:
    """Guardrails on the rollout path: the rules per target and the reward consequences."""

    enabled: bool = True
    """Scan tool calls and tool outputs in rollouts (false: no scanner runs)."""
    penalty: bool = False
    """Subtract the guard's penalties (block_penalty, flag_penalty) from the outcome reward."""
    block_penalty: float = 1.0
    """Penalty of a blocked tool call or withheld tool output."""
    flag_penalty: float = 0.0
    """Penalty of a tool call or output whose findings were only flagged or redacted."""
    fail_closed: bool = True
    """A scanner that raises counts as a block where its rule is block (else as a flag)."""
    tool_call: ToolCallRules = field(default_factory=ToolCallRules)
    """Rules for tool-call arguments."""
    observation: ObservationRules = field(default_factory=ObservationRules)
    """Rules for tool output (documents a tool retrieved included)."""
    prompt: PromptRules = field(default_factory=PromptRules)
    """Rules for user messages."""

    def __post_init__(self) -> None:
        if self.block_penalty < 0 or self.flag_penalty < 0:
            raise ValueError(
                f"block_penalty and flag_penalty must be >= 0, got "
                f"{self.block_penalty} and {self.flag_penalty}"
            )

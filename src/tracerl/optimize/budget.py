"""The search budget in model calls and tokens, and the ledger that keeps it.

A call is one request to a model: one turn of one rollout (a context continued by the
task model) or one teacher reply. Its tokens are the prompt's plus the reply's, as an
API bills them (the whole context of every turn counts again).

The budget is never exceeded: before a call the ledger reserves its worst case (the
prompt plus the most tokens the call may sample) and refuses with `BudgetExhausted`
when that does not fit; afterwards it charges what was really used, which is never
more. Cached responses cost nothing. The spent totals are saved beside the run
(`budget.json`) after every charge, so a resumed search goes on from them.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path


class BudgetExhausted(RuntimeError):
    """The next call would not fit in what is left of the budget."""


@dataclass(frozen=True)
class Budget:
    calls: int = 2000
    """Model calls the search may make (rollout turns and teacher replies; cached ones
    are free)."""
    tokens: int = 400_000
    """Tokens (prompt + completion, every call) the search may spend."""

    def __post_init__(self) -> None:
        if self.calls < 1 or self.tokens < 1:
            raise ValueError(f"budget.calls and budget.tokens must be >= 1, got "
                             f"{self.calls} and {self.tokens}")


@dataclass(frozen=True)
class Spent:
    calls: int = 0
    tokens: int = 0
    cached_calls: int = 0
    """Calls answered from the response cache (free)."""


class Ledger:
    """What the search has spent against its `Budget`; `path` persists it."""

    def __init__(self, budget: Budget, path: Path | None = None) -> None:
        self.budget = budget
        self.path = path
        self.spent = Spent()
        if path is not None and path.is_file():
            self.spent = Spent(**json.loads(path.read_text()))

    @property
    def calls_left(self) -> int:
        return self.budget.calls - self.spent.calls

    @property
    def tokens_left(self) -> int:
        return self.budget.tokens - self.spent.tokens

    def fits(self, calls: int, tokens: int) -> bool:
        return calls <= self.calls_left and tokens <= self.tokens_left

    def reserve(self, calls: int, tokens: int) -> None:
        """Raise BudgetExhausted unless `calls` calls of at most `tokens` tokens fit."""
        if not self.fits(calls, tokens):
            raise BudgetExhausted(
                f"budget exhausted: the next {calls} call(s) may use {tokens} tokens; "
                f"left: {self.calls_left} calls, {self.tokens_left} tokens "
                f"(spent {self.spent.calls}/{self.budget.calls} calls, "
                f"{self.spent.tokens}/{self.budget.tokens} tokens)")

    def charge(self, calls: int, tokens: int, cached_calls: int = 0) -> None:
        s = self.spent
        self.spent = Spent(s.calls + calls, s.tokens + tokens, s.cached_calls + cached_calls)
        if self.path is not None and (calls or cached_calls):
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(asdict(self.spent)))
            os.replace(tmp, self.path)

    def fraction(self) -> float:
        """The larger share spent of the two limits (what a progress bar shows)."""
        return max(self.spent.calls / self.budget.calls, self.spent.tokens / self.budget.tokens)

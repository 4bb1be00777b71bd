"""Audit a reward against the library of known reward hacks (tracerl.rewards.hacks).

Every hack is a completion that does not solve its task, so a sound reward gives each
one 0. The report lists the hacks that scored above 0 ("exploited"). A reward that
raises on a hack (for example a math reward handed a code task) is recorded as
"not_applicable"; None is recorded as "unjudged". Neither counts as exploited.

The hacks are real attacks. Audit only rewards that run code in a sandbox: a reward
that executes completions on the host lets them act on the host.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from tracerl.rewards.compose import FunctionReward
from tracerl.rewards.hacks import ALL_HACKS, CATEGORIES, Hack
from tracerl.types import Trajectory
from tracerl.util.refs import import_reference, is_reference

Verdict = Literal["clean", "exploited", "unjudged", "not_applicable"]


@dataclass(frozen=True)
class HackResult:
    """What the audited reward paid for one hack."""

    hack: str
    category: str
    description: str
    score: float | None
    verdict: Verdict
    error: str | None = None


@dataclass(frozen=True)
class AuditReport:
    """All hack results for one reward; `ok` when none was exploited."""

    reward: str
    results: tuple[HackResult, ...]

    @property
    def exploited(self) -> tuple[HackResult, ...]:
        return tuple(r for r in self.results if r.verdict == "exploited")

    @property
    def ok(self) -> bool:
        return not self.exploited

    def summary(self) -> str:
        counts = {v: sum(r.verdict == v for r in self.results) for v in
                  ("clean", "exploited", "unjudged", "not_applicable")}
        parts = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        return f"{self.reward}: {len(self.results)} hacks: {parts}"


def _judge(reward: Callable[[Trajectory], Any], hack: Hack) -> HackResult:
    base = {"hack": hack.name, "category": hack.category, "description": hack.description}
    try:
        score = reward(hack.trajectory())
    except Exception as exc:
        return HackResult(**base, score=None, verdict="not_applicable",
                          error=f"{type(exc).__name__}: {exc}"[:300])
    score = getattr(score, "score", score)  # accept RewardResult too
    if score is None:
        return HackResult(**base, score=None, verdict="unjudged")
    score = float(score)
    return HackResult(**base, score=score, verdict="exploited" if score > 0 else "clean")


def audit(
    reward: Callable[[Trajectory], Any],
    *,
    categories: Sequence[str] | None = None,
    hacks: Sequence[Hack] | None = None,
) -> AuditReport:
    """Run every known hack (optionally of some categories) through `reward`."""
    # A reward may add hacks on its own task shape (a `hacks()` method): a family's
    # reward whose tasks the library's toy tasks do not resemble.
    own = getattr(reward, "hacks", None)
    chosen = list(hacks if hacks is not None else
                  ALL_HACKS + (tuple(own()) if callable(own) else ()))
    if categories is not None:
        unknown = set(categories) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"unknown hack categories {sorted(unknown)}; choose from {CATEGORIES}")
        chosen = [h for h in chosen if h.category in categories]
    name = str(getattr(reward, "name", None) or getattr(reward, "__name__", "reward"))
    return AuditReport(name, tuple(_judge(reward, h) for h in chosen))


def resolve_reward(spec: str, **options: Any) -> Callable[[Trajectory], Any]:
    """A reward from a CLI name: `code_tests`, `math_answer`, or `module:attr`.

    A class (or factory) at `module:attr` is called with no arguments; a function of a
    Trajectory is used as it is.
    """
    from tracerl.rewards.code import CodeTestsReward
    from tracerl.rewards.math import MathAnswerReward

    if spec == "code_tests":
        return CodeTestsReward(**options)
    if spec == "math_answer":
        return MathAnswerReward(**{k: v for k, v in options.items() if k == "timeout_s"})
    if not is_reference(spec):
        raise ValueError(f"reward {spec!r}: use code_tests, math_answer or module:attr")
    obj = import_reference(spec, "reward")
    if isinstance(obj, type):
        obj = obj()
    if not callable(obj):
        raise ValueError(f"reward {spec!r} is not callable")
    return obj if hasattr(obj, "name") else FunctionReward(obj, name=spec.rpartition(":")[2])

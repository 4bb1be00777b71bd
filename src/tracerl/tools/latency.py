"""Latency profiles: make any tool as slow as the API it stands for.

Real agents call tools that take hundreds of milliseconds (web search, APIs, compilers,
sandboxes). A profile adds that wait to a tool's every call, as an asyncio sleep before
the call runs: it occupies no thread and no CPU, as waiting on a remote service does,
and it counts against the env's tool timeout like a slow service would. Benchmarks and
tests use it to measure what latency costs a rollout loop (benchmarks/async.py).

A profile is written as text, in milliseconds, so a family's config can carry it:

    ""  or "0"                no added latency
    "200"  or "fixed:200"     200 ms every call
    "uniform:100:300"         uniform between 100 and 300 ms
    "exponential:200"         exponential with mean 200 ms (a memoryless service)
    "lognormal:200:0.5"       log-normal with median 200 ms and sigma 0.5 (a heavy tail)
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import random
from dataclasses import dataclass
from typing import Any, Literal

from tracerl.tools.tool import Tool

Kind = Literal["none", "fixed", "uniform", "exponential", "lognormal"]
_ARITY = {"fixed": 1, "uniform": 2, "exponential": 1, "lognormal": 2}


@dataclass(frozen=True)
class LatencyProfile:
    """A distribution of added latency per call, in milliseconds."""

    kind: Kind = "none"
    a: float = 0.0
    """fixed: the latency; uniform: the low end; exponential: the mean; lognormal: the median."""
    b: float = 0.0
    """uniform: the high end; lognormal: sigma."""

    def __post_init__(self) -> None:
        if self.a < 0 or self.b < 0:
            raise ValueError(f"latency parameters must be >= 0, got {self.a}, {self.b}")
        if self.kind == "uniform" and self.b < self.a:
            raise ValueError(f"uniform latency needs low <= high, got {self.a} > {self.b}")

    @classmethod
    def parse(cls, spec: str | float) -> LatencyProfile:
        """A profile from its text form (module docstring; a number is fixed ms); a clear
        error otherwise."""
        text = str(spec).strip()
        if text in ("", "0", "0.0", "none"):
            return cls()
        head, *rest = text.split(":")
        try:
            if not rest:
                return cls("fixed", float(head))
            if head not in _ARITY or len(rest) != _ARITY[head]:
                raise ValueError
            values = [float(v) for v in rest]
        except ValueError:
            raise ValueError(
                f"bad tool latency {text!r}: expected MS, fixed:MS, uniform:LOW:HIGH, "
                "exponential:MEAN or lognormal:MEDIAN:SIGMA (milliseconds)") from None
        return cls(head, *values)  # type: ignore[arg-type]

    @property
    def enabled(self) -> bool:
        return self.kind != "none"

    @property
    def mean_ms(self) -> float:
        if self.kind == "uniform":
            return (self.a + self.b) / 2
        if self.kind == "lognormal":
            return self.a * math.exp(self.b ** 2 / 2)
        return self.a if self.enabled else 0.0

    def sample_s(self, rng: random.Random) -> float:
        """One call's added latency, in seconds."""
        if self.kind == "uniform":
            ms = rng.uniform(self.a, self.b)
        elif self.kind == "exponential":
            ms = rng.expovariate(1 / self.a) if self.a else 0.0
        elif self.kind == "lognormal":
            ms = self.a * math.exp(rng.gauss(0.0, self.b))
        else:
            ms = self.a if self.enabled else 0.0
        return ms / 1000.0


def with_latency(t: Tool, profile: LatencyProfile, seed: int = 0) -> Tool:
    """`t` with `profile`'s latency before every call (the tool itself is unchanged)."""
    if not profile.enabled:
        return t
    rng = random.Random(f"latency/{t.name}/{seed}")

    async def slow(**arguments: Any) -> Any:
        await asyncio.sleep(profile.sample_s(rng))
        return await t.acall(arguments)

    return dataclasses.replace(t, fn=slow)

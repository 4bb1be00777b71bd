"""math_answer: is the completion's final answer mathematically equal to the gold one?

Equivalence is Hugging Face's math-verify (`verify(parse(gold), parse(answer))`, gold
first: it is not symmetric). Two problems with calling it directly, both solved by
running it in a sandbox worker that already imported it:
- its timeouts use SIGALRM, which only works on the main thread (TRL turns them off
  off the main thread, leaving no timeout at all); here its own timeouts are off and
  the parent kills the verification at a wall-clock limit, from any thread;
- sympy's expression parser evaluates text, and the answer is model output.
A verification that outlives the limit scores 0 (the answer made the checker hang);
a sandbox failure, or a gold answer math-verify cannot parse (a broken dataset row or
a broken checker install), scores None: unjudged, never "wrong".

Speed (issue 15): a process per answer cost about 100 ms where math-verify itself
takes 0.1-0.4 ms. `math_answer_batch` verifies a whole batch in one sandboxed session
forked from the warm worker: the answers go over in one pipelined request and come back
one reply each, every reply under its own wall-clock deadline. When one answer hangs,
blows the memory limit or crashes the process, that answer gets its verdict and a fresh
session takes the rest; the others never share its fate. Pairs that plain arithmetic
decides exactly as math-verify would (tracerl.rewards.math_exact) never reach sympy.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracerl.rewards.base import RewardResult
from tracerl.rewards.extract import distinct_final_answers, extract_answer
from tracerl.rewards.math_exact import exact_verdict
from tracerl.sandbox import Limits, SandboxPool, Session, _wire
from tracerl.types import Trajectory

_CHECKER = """
from math_verify import parse, verify

_golds = {}


def check(gold, answer):
    g = _golds.get(gold)
    if g is None:
        g = _golds[gold] = parse(gold, parsing_timeout=None)
    a = parse(answer, parsing_timeout=None)
    equal = bool(g) and bool(a) and verify(g, a, timeout_seconds=None)
    return [bool(equal), str(a[:1]), bool(g)]
"""
_WARMUP = r"""
from math_verify import parse, verify
for gold, answer in [("\\boxed{12}", "\\boxed{12.0}"), ("\\boxed{\\frac{1}{2}}", "$0.5$"),
                     ("\\boxed{(x+1)^2}", "\\boxed{x^2+2x+1}"),
                     ("\\boxed{[1, 2)}", "\\boxed{\\{1\\}}"),
                     ("\\boxed{x = \\sqrt{2}\\pi}", "\\boxed{2^{1/2} \\cdot \\pi}")]:
    verify(parse(gold, parsing_timeout=None), parse(answer, parsing_timeout=None),
           timeout_seconds=None)
"""
"""Run once in the worker: the first parse of each kind builds tables that forks share."""
MAX_SESSION_S = 600.0
_pools: dict[str, SandboxPool] = {}
_lock = threading.Lock()


def math_pool() -> SandboxPool:
    """The process-wide sandbox pool with math-verify preloaded (started on first use)."""
    with _lock:
        if "math" not in _pools:
            _pools["math"] = SandboxPool(workers=1, preload=("math_verify",), warmup=_WARMUP)
        return _pools["math"]


def _as_latex(text: str) -> str:
    """Give math-verify an anchor it recognises: bare answers are boxed."""
    if "\\boxed" in text or "$" in text:
        return text
    return f"\\boxed{{{text}}}"


@dataclass(frozen=True)
class _Pending:
    """One answer waiting for the sandboxed checker."""

    index: int
    gold: str
    answer: str
    details: dict[str, Any]


def math_answer(
    completion: str,
    gold: str,
    *,
    timeout_s: float = 5.0,
    pool: SandboxPool | None = None,
) -> RewardResult:
    """1.0 when the extracted answer equals `gold` (boxed, <answer> tag, "Answer:", or
    the last number, in that order), 0.0 otherwise, None if the sandbox failed.

    Several different boxed (or tagged) answers score 0 as "ambiguous".
    """
    return math_answer_batch([completion], [gold], timeout_s=timeout_s, pool=pool)[0]


def math_answer_batch(
    completions: Sequence[str],
    golds: Sequence[str],
    *,
    timeout_s: float = 5.0,
    pool: SandboxPool | None = None,
) -> list[RewardResult]:
    """`math_answer` for each (completion, gold) pair, verified in one warm session.

    `timeout_s` bounds each answer's verification on its own; the results are in the
    order of the inputs.
    """
    if isinstance(completions, str) or isinstance(golds, str):
        raise TypeError("math_answer_batch needs sequences of completions and golds, not str")
    if len(completions) != len(golds):
        raise ValueError(f"math_answer_batch: {len(completions)} completions but "
                         f"{len(golds)} gold answers")
    out: list[RewardResult | None] = []
    pending: list[_Pending] = []
    for i, (completion, gold) in enumerate(zip(completions, golds, strict=True)):
        decided = _prejudge(i, completion, gold)
        out.append(decided if isinstance(decided, RewardResult) else None)
        if isinstance(decided, _Pending):
            pending.append(decided)
    if pending:
        for item, result in _verify(pending, pool or math_pool(), timeout_s):
            out[item.index] = result
    return [r if r is not None else RewardResult(None, "infra_error") for r in out]


def _prejudge(i: int, completion: str, gold: str) -> RewardResult | _Pending:
    """The verdict when extraction or arithmetic settles it, else the checker's work."""
    if not isinstance(completion, str) or not isinstance(gold, str) or not gold.strip():
        raise ValueError(f"math_answer needs str completion and a non-empty str gold answer "
                         f"(item {i}: gold {gold!r:.40})")
    answer, how = extract_answer(completion)
    if answer is None:
        return RewardResult(0.0, "no_answer", 0, 1, {"extracted_by": how})
    if distinct_final_answers(completion) > 1:
        return RewardResult(0.0, "ambiguous", 0, 1, {"extracted_by": how,
                            "why": "several different final answers (hedging)"})
    details = {"extracted": answer, "extracted_by": how}
    exact = exact_verdict(gold, answer)
    if exact is not None:
        return RewardResult(float(exact), "ok" if exact else "wrong", int(exact), 1,
                            {**details, "exact": True})
    return _Pending(i, _as_latex(gold), _as_latex(answer), details)


def _verify(items: list[_Pending], pool: SandboxPool,
            timeout_s: float) -> list[tuple[_Pending, RewardResult]]:
    """Verdicts for `items`; a fresh session takes over after one that died."""
    done: list[tuple[_Pending, RewardResult]] = []
    while len(done) < len(items):
        rest = items[len(done):]
        done.extend(_session(rest, pool, timeout_s))
    return done


def _session(items: list[_Pending], pool: SandboxPool,
             timeout_s: float) -> list[tuple[_Pending, RewardResult]]:
    """Verify `items` in order in one session until they are done or one kills it."""
    limits = Limits(timeout_s=min(MAX_SESSION_S, timeout_s * (len(items) + 2)),
                    memory_mb=pool.limits.memory_mb)
    done: list[tuple[_Pending, RewardResult]] = []
    with Session(pool, _CHECKER, limits, load_timeout_s=timeout_s) as session:
        if not session.loaded:
            why = f"the checker did not load: {session.close().stderr[-500:]}"
            return [(item, _infra(item, why)) for item in items]
        calls = [{"args": _wire.encode((item.gold, item.answer))} for item in items]
        replies = session.stream({"op": "map", "target": {"global": "check"},
                                  "calls": calls}, len(items), timeout_s)
        for item, reply in zip(items, replies, strict=False):
            if reply is None:  # this answer hung, blew the memory or killed the process
                ended = session.close()
                details = {**item.details, "sandbox": ended.status}
                if ended.status in ("timeout", "memory_limit"):
                    done.append((item, RewardResult(0.0, ended.status, 0, 1, details)))
                else:
                    done.append((item, _infra(item, f"checker process ended: {ended.status}; "
                                                    f"{ended.stderr[-500:]}")))
                return done
            done.append((item, _judge(item, reply)))
    return done


def _judge(item: _Pending, reply: dict[str, Any]) -> RewardResult:
    details = {**item.details, "sandbox": "ok"}
    if reply.get("ok") is False:
        if reply.get("exc") == "MemoryError":
            return RewardResult(0.0, "memory_limit", 0, 1, {**details, "sandbox": "memory_limit"})
        return _infra(item, f"checker raised {reply.get('exc')}: {str(reply.get('msg'))[:300]}")
    try:
        equal, parsed, gold_parsed = _wire.decode(reply.get("value"))
    except (_wire.WireError, TypeError, ValueError):
        return _infra(item, "malformed reply from the checker")
    if gold_parsed is not True:  # the data (or the checker) failed, not the answer
        return RewardResult(None, "bad_gold", 0, 1, {
            **details, "error": f"math-verify could not parse the gold answer {item.gold!r}"})
    ok = equal is True
    return RewardResult(float(ok), "ok" if ok else "wrong", int(ok), 1,
                        {**details, "parsed": [parsed]})


def _infra(item: _Pending, why: str) -> RewardResult:
    return RewardResult(None, "infra_error", 0, 1, {**item.details, "error": why})


@dataclass
class MathAnswerReward:
    """math_answer as a Reward: the final turn's text against `task.answer`.

    `batch` scores many trajectories in one sandboxed session; the rollout runner calls
    it once per rollout batch.
    """

    name: str = "math_answer"
    timeout_s: float = 5.0
    pool: SandboxPool | None = None

    def _gold(self, trajectory: Trajectory) -> str:
        gold = trajectory.task.answer
        if gold is None:
            raise ValueError(f"task {trajectory.task.id!r} has no answer to check against")
        return str(gold)

    def result(self, trajectory: Trajectory) -> RewardResult:
        return math_answer(trajectory.final_text, self._gold(trajectory),
                           timeout_s=self.timeout_s, pool=self.pool)

    def results(self, trajectories: Sequence[Trajectory]) -> list[RewardResult]:
        """`result` for each trajectory, verified together."""
        golds = [self._gold(t) for t in trajectories]
        return math_answer_batch([t.final_text for t in trajectories], golds,
                                 timeout_s=self.timeout_s, pool=self.pool)

    def batch(self, trajectories: Sequence[Trajectory]) -> list[float | None]:
        return [r.score for r in self.results(trajectories)]

    def __call__(self, trajectory: Trajectory) -> float | None:
        return self.result(trajectory).score

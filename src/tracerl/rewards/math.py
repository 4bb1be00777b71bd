"""math_answer: is the completion's final answer mathematically equal to the gold one?

Equivalence is Hugging Face's math-verify (`verify(parse(gold), parse(answer))`, gold
first: it is not symmetric). Two problems with calling it directly, both solved by
running it in a sandbox worker that already imported it:
- its timeouts use SIGALRM, which only works on the main thread (TRL turns them off
  off the main thread, leaving no timeout at all); here its own timeouts are off and
  the worker kills the verification at a wall-clock limit, from any thread;
- sympy's expression parser evaluates text, and the answer is model output.
A verification that outlives the limit scores 0 (the answer made the checker hang);
a sandbox failure, or a gold answer math-verify cannot parse (a broken dataset row or
a broken checker install), scores None: unjudged, never "wrong".
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass

from tracerl.rewards.base import RewardResult
from tracerl.rewards.extract import distinct_final_answers, extract_answer
from tracerl.sandbox import SandboxPool
from tracerl.types import Trajectory

_VERIFY = """
import json, sys
from math_verify import parse, verify
req = json.loads(sys.stdin.read())
gold = parse(req["gold"], parsing_timeout=None)
answer = parse(req["answer"], parsing_timeout=None)
equal = bool(gold) and bool(answer) and verify(gold, answer, timeout_seconds=None)
print(req["nonce"] + json.dumps({"equal": bool(equal), "parsed": [str(answer[:1])],
                                 "gold_parsed": bool(gold)}))
"""
_pools: dict[str, SandboxPool] = {}
_lock = threading.Lock()


def math_pool() -> SandboxPool:
    """The process-wide sandbox pool with math-verify preloaded (started on first use)."""
    with _lock:
        if "math" not in _pools:
            _pools["math"] = SandboxPool(workers=1, preload=("math_verify",))
        return _pools["math"]


def _as_latex(text: str) -> str:
    """Give math-verify an anchor it recognises: bare answers are boxed."""
    if "\\boxed" in text or "$" in text:
        return text
    return f"\\boxed{{{text}}}"


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
    if not isinstance(completion, str) or not isinstance(gold, str) or not gold.strip():
        raise ValueError("math_answer needs str completion and a non-empty str gold answer")
    answer, how = extract_answer(completion)
    if answer is None:
        return RewardResult(0.0, "no_answer", 0, 1, {"extracted_by": how})
    if distinct_final_answers(completion) > 1:
        return RewardResult(0.0, "ambiguous", 0, 1, {"extracted_by": how,
                            "why": "several different final answers (hedging)"})
    nonce = uuid.uuid4().hex
    req = json.dumps({"gold": _as_latex(gold), "answer": _as_latex(answer), "nonce": nonce})
    res = (pool or math_pool()).run_python(_VERIFY, stdin=req, timeout_s=timeout_s)
    details = {"extracted": answer, "extracted_by": how, "sandbox": res.status}
    if res.status in ("timeout", "memory_limit"):
        return RewardResult(0.0, res.status, 0, 1, details)
    verdict = _verdict(res.stdout, nonce)
    if res.status != "ok" or verdict is None:
        return RewardResult(None, "infra_error", 0, 1, {**details, "stderr": res.stderr[-500:]})
    if verdict.get("gold_parsed") is False:  # the data (or the checker) failed, not the answer
        return RewardResult(None, "bad_gold", 0, 1, {
            **details, "error": f"math-verify could not parse the gold answer {gold!r}"})
    equal = verdict["equal"] is True
    return RewardResult(float(equal), "ok" if equal else "wrong", int(equal), 1,
                        {**details, "parsed": verdict.get("parsed")})


def _verdict(stdout: str, nonce: str) -> dict | None:
    for line in stdout.splitlines():
        if line.startswith(nonce):
            try:
                out = json.loads(line[len(nonce):])
            except ValueError:
                return None
            return out if isinstance(out, dict) else None
    return None


@dataclass
class MathAnswerReward:
    """math_answer as a Reward: the final turn's text against `task.answer`."""

    name: str = "math_answer"
    timeout_s: float = 5.0
    pool: SandboxPool | None = None

    def result(self, trajectory: Trajectory) -> RewardResult:
        gold = trajectory.task.answer
        if gold is None:
            raise ValueError(f"task {trajectory.task.id!r} has no answer to check against")
        return math_answer(trajectory.final_text, str(gold), timeout_s=self.timeout_s,
                           pool=self.pool)

    def __call__(self, trajectory: Trajectory) -> float | None:
        return self.result(trajectory).score

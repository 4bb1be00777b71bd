"""code_tests: run hidden tests against a candidate program, in a way it cannot game.

The common grader ("append the tests, run the file, 1.0 if exit code 0") pays full
marks to `os._exit(0)`. Here nothing the candidate can forge is believed:

- Function tests run in the trusted parent. The candidate is loaded in a sandboxed
  session and answers calls (tracerl.rewards.remote): it sees arguments, never the
  expected values or the tests, which stay in this process (and out of the sandbox's
  filesystem: see tracerl.sandbox.isolation).
- Values come back through a codec that rebuilds only built-in types with exact type
  checks, so always-equal objects, patched builtins and a rewritten harness in the
  child have nothing to act on: the comparison happens here, on our own objects.
- Exit codes and stdout markers are ignored. A candidate that exits, crashes, hangs or
  kills something fails the case it was running (CandidateCrashed is a BaseException
  so test code's `except Exception` cannot count it as the expected error).
- Input/output tests compare stdout here, against text the sandbox never saw.
- When the sandbox itself fails (infra_error) the score is None, never 0.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from types import CodeType
from typing import Any

from tracerl.rewards.base import RewardResult
from tracerl.rewards.extract import extract_code
from tracerl.rewards.pipeline import SLOT, PipelinedCall
from tracerl.rewards.prepared import PreparedPlan, prepare
from tracerl.rewards.remote import (
    CandidateCrashed,
    CandidateRPC,
    Outcome,
    RemoteObject,
    encode_call,
)
from tracerl.rewards.testspec import IOCase, SourceCase, TestPlan, parse_tests
from tracerl.sandbox import ExecResult, Limits, SandboxPool, default_pool
from tracerl.types import Trajectory

MAX_SESSION_S = 600.0


def code_tests(
    candidate: str,
    tests: Any,
    *,
    timeout_s: float = 5.0,
    partial: bool = True,
    entry_point: str | None = None,
    memory_mb: int = 1024,
    pool: SandboxPool | None = None,
) -> RewardResult:
    """Score `candidate` source code on hidden `tests` (see tracerl.rewards.testspec).

    `timeout_s` bounds each test case (and each input/output run). With `partial` the
    score is passed/total and every case runs. Without it the score is 1.0 only when
    every case passes, and the run stops at the first failing case, as a test file
    would (its score is 0 by then): `passed` then counts the cases that passed before
    it, `details["ran"]` how many ran (always reported; equal to `total` when all ran).
    Returns score None with status "infra_error" when the sandbox could not judge.
    """
    if not isinstance(candidate, str):
        raise TypeError(f"candidate must be str source code, got {type(candidate).__name__}")
    plan = parse_tests(tests, entry_point)
    pool = pool or default_pool()
    if plan.io:
        return _run_io(candidate, plan.io, pool, timeout_s, memory_mb, partial)
    return _run_source(candidate, plan, pool, timeout_s, memory_mb, partial)


def _score(passed: int, total: int, partial: bool, cases: list[dict[str, Any]],
           extra: dict[str, Any] | None = None) -> RewardResult:
    score = passed / total if partial else float(passed == total)
    status = "ok" if passed == total else "wrong"
    return RewardResult(score, status, passed, total,
                        {"cases": cases, "ran": len(cases), **(extra or {})})


def _infra(total: int, why: str) -> RewardResult:
    return RewardResult(None, "infra_error", 0, total, {"error": why})


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _run_io(candidate: str, cases: tuple[IOCase, ...], pool: SandboxPool, timeout_s: float,
            memory_mb: int, partial: bool) -> RewardResult:
    passed, report = 0, []
    for i, case in enumerate(cases):
        res = pool.run_python(candidate, stdin=case.stdin, timeout_s=timeout_s,
                              memory_mb=memory_mb)
        if res.status == "infra_error":
            return _infra(len(cases), f"case {i}: {res.error}")
        ok = res.status == "ok" and _normalise(res.stdout) == _normalise(case.stdout)
        passed += ok
        report.append({"case": i, "passed": ok, "status": res.status})
        if not ok and not partial:  # all or nothing: the score is 0 already
            break
    return _score(passed, len(cases), partial, report)


def _run_source(candidate: str, plan: TestPlan, pool: SandboxPool, timeout_s: float,
                memory_mb: int, partial: bool) -> RewardResult:
    session_s = min(MAX_SESSION_S, timeout_s * (plan.total + 2))
    rpc = CandidateRPC(pool, candidate, _session_limits(session_s, memory_mb),
                       call_timeout_s=timeout_s)
    prep = prepare(plan)
    try:
        loaded = rpc.start(prep.ahead, prep.head, prep.last)
        names = rpc.names() if loaded else {}
    except CandidateCrashed:
        loaded, names = False, {}
    if not loaded:
        results = rpc.close()
        if any(r.status == "infra_error" for r in results):
            return _infra(plan.total, _first_error(results))
        return RewardResult(0.0, "error", 0, plan.total,
                            {"error": "candidate did not load", "stderr": _stderr(results)})
    namespace = _namespace(names, plan)
    early = _take_ahead(prep, namespace, rpc)
    passed, report = 0, []
    run = _run_cases(plan, prep, namespace, rpc, early)
    for case, ok, why in run:
        if not case.setup:
            passed += ok
            report.append({"case": case.name, "passed": ok, "why": why})
            if not ok and not partial:  # all or nothing: the score is 0 already
                break
    run.close()
    results = rpc.close()
    if any(r.status == "infra_error" for r in results):
        return _infra(plan.total, _first_error(results))
    return _score(passed, plan.total, partial, report,
                  {"restarts": rpc.crashes, "stderr": _stderr(results)})


@functools.lru_cache(maxsize=64)
def _session_limits(session_s: float, memory_mb: int) -> Limits:
    """Limits for a session, built once per value (their checks are a visible part of a
    verification's parent-side CPU, issue 15; runs mostly share a few values)."""
    return Limits(timeout_s=session_s, memory_mb=memory_mb)


def _namespace(names: dict[str, Any], plan: TestPlan) -> dict[str, Any]:
    """The trusted namespace tests run in: builtins, plus only the candidate names the
    tests use and do not define themselves (a candidate `abs` never shadows ours)."""
    ns: dict[str, Any] = {"__builtins__": builtins, "__name__": "__tests__"}
    for name in plan.free_names:
        if name in names:
            ns[name] = names[name]
    return ns


def _take_ahead(prep: PreparedPlan, namespace: dict[str, Any],
                rpc: CandidateRPC) -> list[Outcome]:
    """The outcomes of the request sent with the job, one per leading case; empty when
    none was sent, or when its function is not a callable of the candidate: the replies
    are then read and dropped (such a call has no effect: the child cannot call a plain
    value or a missing name) and the cases run one by one, as without that request."""
    if not prep.head:
        return []
    got = rpc.take_ahead()
    return got if isinstance(namespace.get(_call(prep, 0).func), RemoteObject) else []


def _run_cases(plan: TestPlan, prep: PreparedPlan, namespace: dict[str, Any],
               rpc: CandidateRPC, early: list[Outcome]
               ) -> Iterator[tuple[SourceCase, bool, str]]:
    """Every case in order; runs of independent asserts get their candidate calls in one
    pipelined round trip first (tracerl.rewards.pipeline), the rest one call at a time.
    `early` holds the outcomes of the leading cases' calls, made with the job (fewer
    than asked when the candidate crashed: the rest then go as usual)."""
    callables = frozenset(n for n, v in namespace.items() if isinstance(v, RemoteObject))
    cases, i = plan.source, 0
    for case, outcome in zip(cases, early, strict=False):
        yield case, *_run_case(case, {**namespace, SLOT: outcome}, _call(prep, i).check)
        i += 1
    while i < len(cases):
        run: list[int] = []
        while i + len(run) < len(cases):
            call = prep.calls[i + len(run)]
            if call is None or call.func not in callables:
                break
            run.append(i + len(run))
        if len(run) < 2:  # nothing to save on a single call
            yield cases[i], *_run_case(cases[i], namespace)
            i += 1
            continue
        outcomes = _prefetch(run, prep, namespace, rpc)
        for k, outcome in zip(run, outcomes, strict=True):
            if outcome is None:  # not sent (its arguments failed) or after a crash
                yield cases[k], *_run_case(cases[k], namespace)
            else:
                yield cases[k], *_run_case(cases[k], {**namespace, SLOT: outcome},
                                           _call(prep, k).check)
        i += len(run)


def _prefetch(run: list[int], prep: PreparedPlan, namespace: dict[str, Any],
              rpc: CandidateRPC) -> list[Outcome | None]:
    """One pipelined request per function for the calls of the run's cases (indices
    into the plan), in the run's order: the run is split where the function changes, so
    calls still reach the candidate in the order the asserts make them. Constant
    arguments come encoded from `prep`. None for a case whose call was not made."""
    out: list[Outcome | None] = [None] * len(run)
    start = 0
    while start < len(run):
        func = _call(prep, run[start]).func
        end = start
        while end < len(run) and _call(prep, run[end]).func == func:
            end += 1
        sent, calls = [], []
        for k in range(start, end):
            text = prep.encoded[run[k]]
            if text is None:
                try:  # arguments that fail to evaluate or encode fail in the case itself
                    args, kwargs = eval(_call(prep, run[k]).arguments, namespace)
                    text = encode_call(args, kwargs)
                except Exception:
                    continue
            calls.append(text)
            sent.append(k)
        try:
            got = rpc.map(func, calls) if calls else []
        except CandidateCrashed:  # too many restarts: the cases fail one by one
            got = []
        for k, outcome in zip(sent, got, strict=False):
            out[k] = outcome
        if len(got) < len(calls):  # a crash ended the stream: the rest run one by one
            return out
        start = end
    return out


def _call(prep: PreparedPlan, k: int) -> PipelinedCall:
    call = prep.calls[k]
    assert call is not None
    return call


def _run_case(case: SourceCase, namespace: dict[str, Any],
              code: CodeType | None = None) -> tuple[bool, str]:
    try:
        exec(code or case.compiled, namespace)
        return True, ""
    except CandidateCrashed as exc:
        return False, f"candidate crashed: {exc}"
    except AssertionError as exc:
        return False, f"assertion failed {exc}".strip()
    except Exception as exc:
        return False, f"{type(exc).__name__}: {str(exc)[:200]}"


def _first_error(results: list[ExecResult]) -> str:
    return next((str(r.error) for r in results if r.status == "infra_error"), "")


def _stderr(results: list[ExecResult]) -> str:
    return "\n".join(r.stderr for r in results if r.stderr)[-2000:]


@dataclass
class CodeTestsReward:
    """code_tests as a Reward: code from the final turn, tests from the Task.

    Tests come from `task.metadata["tests"]` (or `task.answer`), the entry point from
    `task.metadata["entry_point"]`. The code is the last fenced code block of the final
    turn, or the whole text when there is none.
    """

    name: str = "code_tests"
    timeout_s: float = 5.0
    partial: bool = True
    pool: SandboxPool | None = None

    def result(self, trajectory: Trajectory) -> RewardResult:
        task = trajectory.task
        tests = task.metadata.get("tests", task.answer)
        if tests is None:
            raise ValueError(f"task {task.id!r} has no tests (metadata['tests'] or answer)")
        return code_tests(extract_code(trajectory.final_text), tests, timeout_s=self.timeout_s,
                          partial=self.partial, entry_point=task.metadata.get("entry_point"),
                          pool=self.pool)

    def __call__(self, trajectory: Trajectory) -> float | None:
        return self.result(trajectory).score

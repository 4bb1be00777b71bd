"""The candidate-independent half of a function-test run, computed once per test plan.

In RL a group of G completions of one Task is scored on the same tests, and a benchmark
scores several candidates of one problem: which asserts pipeline
(tracerl.rewards.pipeline) and the encoded arguments of every call whose arguments the
tests fix are the same for each of them. Parsing is cached by test text
(testspec.parse_tests); this caches the rest, keyed by the parsed plan, so that a
verification encodes nothing the tests fix. For `assert f(list(range(10**5))) == ...`
that was most of the parent's CPU time (issue 15: evaluating, packing and serialising
the list for every candidate).

A call's arguments are constant when they name nothing but built-ins that the tests
never rebind (no setup variable, no shadowed `sorted`; candidate names are excluded by
pipelined_call already): evaluated once here, in a namespace holding only the builtins,
they are the values every run would compute. The candidate receives the same arguments
in the same order as before; the expected values are still computed in each run, in
the trusted parent, and nothing about the candidate is cached.

A big constant whose source is short (`list(range(10**5))`) goes as that source, which
the child evaluates with its builtins right before the call, as the common grader's
test file would: sending its value cost the child more than building it (a megabyte of
message read, scanned and decoded: thousands of copy-on-write page faults, issue 15).
The candidate could only change what it receives itself (by patching its builtins),
which gives it nothing it does not already have by ignoring its arguments: the
expected value is still computed here.
"""

from __future__ import annotations

import builtins
import functools
from dataclasses import dataclass

from tracerl.rewards.pipeline import PipelinedCall, pipelined_call
from tracerl.rewards.remote import encode_call, expression_call, map_request
from tracerl.rewards.testspec import TestPlan

AHEAD_MAX_BYTES = 32 * 1024
"""The largest first request sent with the job, before the candidate has loaded (it
travels inside the job message, which the worker reads whole before it forks)."""
CONSTANT_MAX_BYTES = 4 << 20
"""Encoded constant arguments kept per plan; beyond it calls are encoded per run (the
cache holds PLANS_CACHED plans, so this bounds its memory)."""
PLANS_CACHED = 64
EXPRESSION_MIN_BYTES = 4096
"""A constant call at least this big when encoded, whose arguments' source is a
quarter of that or less, goes as that source, evaluated in the child."""


@dataclass(frozen=True)
class PreparedPlan:
    """What every run of one TestPlan shares."""

    calls: tuple[PipelinedCall | None, ...]
    """Per case of the plan: its pipelined form, or None when it runs on its own."""
    encoded: tuple[bytes | None, ...]
    """Per case: its call encoded (`encode_call`'s, or `expression_call`'s for a big
    value with a short source) when the arguments are constant."""
    ahead: bytes | None = None
    """The request for the plan's leading run of constant calls, sent with the job."""
    head: int = 0
    """How many leading cases `ahead` answers, one reply each."""
    last: bool = False
    """`ahead` answers every case of the plan (sent with `last`: the child ends after it)."""

    @staticmethod
    def one_call_a_trip(plan: TestPlan) -> PreparedPlan:
        """Nothing pipelined: every candidate call is its own round trip."""
        return PreparedPlan((None,) * len(plan.source), (None,) * len(plan.source))


@functools.lru_cache(maxsize=PLANS_CACHED)
def prepare(plan: TestPlan) -> PreparedPlan:
    """The pipelined calls of `plan`, its constant arguments encoded, and the request
    that goes out with the job: the plan's leading run of constant calls of one
    function, when nothing precedes it (a setup case or a non-constant call ends it)."""
    calls = tuple(pipelined_call(case, plan.free_names) for case in plan.source)
    encoded: list[bytes | None] = []
    weights: list[int] = []  # encoded size of each constant's value, however it travels
    size = 0
    for call in calls:
        text, weight = _constant(call, plan.bound_names) or (None, 0)
        if text is not None and size + len(text) > CONSTANT_MAX_BYTES:
            text = None
        size += len(text or b"")
        encoded.append(text)
        weights.append(weight)
    head, size = 0, 0
    first = calls[0] if calls else None
    while head < len(calls) and first is not None:
        call, text = calls[head], encoded[head]
        if call is None or text is None or call.func != first.func:
            break
        # By the value's size, also when its source travels: a big argument is costly
        # to build, and a sequential grader that stops at a first failure never would.
        size += weights[head]
        if size > AHEAD_MAX_BYTES:  # the rest of the run goes in the first `_prefetch`
            break
        head += 1
    if head == 0 or first is None:
        return PreparedPlan(calls, tuple(encoded))
    # When these are all the plan's cases, nothing follows them: the child may exit
    # while the parent compares, instead of waiting for the parent's EOF.
    last = head == len(calls)
    ahead = map_request(first.func, [t for t in encoded[:head] if t is not None], last=last)
    return PreparedPlan(calls, tuple(encoded), ahead, head, last)


def _constant(call: PipelinedCall | None, bound: frozenset[str]) -> tuple[bytes, int] | None:
    """When its arguments are constant and encode: the call as it travels (its encoded
    value, or the arguments' source for a big value) and the encoded value's size."""
    if call is None:
        return None
    names = call.arguments.co_names  # pipelined arguments hold no attribute or lambda
    if any(n in bound or not hasattr(builtins, n) for n in names):
        return None
    try:
        args, kwargs = eval(call.arguments, {"__builtins__": builtins})
        text = encode_call(args, kwargs)
    except Exception:  # fails in the run itself, where the case reports it
        return None
    if len(text) >= EXPRESSION_MIN_BYTES and 4 * len(call.source) <= len(text):
        return expression_call(call.source), len(text)
    return text, len(text)

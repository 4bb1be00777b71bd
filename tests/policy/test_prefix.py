"""Shared prefixes of a prefill batch: the plan reassembles every context, shares what
rows have in common, and costs no more tokens than the best partition into runs."""

import itertools
import random

import pytest

from tracerl.policy.prefix import plan_prefixes


def _cost(plan, contexts):
    return sum(len(p) for p in plan.prefixes) + sum(
        len(c) - cut for c, cut in zip(contexts, plan.cut, strict=True))


def _check(plan, contexts):
    for i, c in enumerate(contexts):
        prefix = plan.prefixes[plan.cluster[i]]
        assert plan.cut[i] == len(prefix) < len(c)
        assert prefix + plan.suffix(contexts, i) == list(c)


def test_a_group_shares_its_prompt_and_each_row_keeps_its_remainder():
    system = list(range(100, 140))
    groups = [system + list(range(30)), system + list(range(1, 31))]
    contexts = [g + [50 + r, 60 + r, 70] for g in groups for r in range(4)]
    plan = plan_prefixes(contexts)
    _check(plan, contexts)
    assert sorted(len(p) for p in plan.prefixes) == [70, 70]  # one per group
    assert len(set(plan.cluster[:4])) == 1 and plan.cluster[0] != plan.cluster[4]
    assert _cost(plan, contexts) == 2 * 70 + 8 * 3
    # short task parts: sharing only the system prompt across groups costs less
    short = [system + [g, g + 1] + [50 + r, 60 + r, 70] for g in (1, 7) for r in range(4)]
    plan = plan_prefixes(short)
    _check(plan, short)
    assert [len(p) for p in plan.prefixes] == [40]


def test_identical_contexts_keep_one_token_each_and_strangers_stay_alone():
    contexts = [[5, 6, 7]] * 3 + [[9, 8]]
    plan = plan_prefixes(contexts)
    _check(plan, contexts)
    assert plan.cut == [2, 2, 2, 1]
    assert plan.prefixes[plan.cluster[0]] == [5, 6]
    assert plan.prefixes[plan.cluster[3]] == [9]


def test_the_plan_is_the_cheapest_partition_of_the_sorted_runs():
    rng = random.Random(0)
    for _ in range(60):
        stems = [[rng.randrange(3) for _ in range(rng.randrange(0, 6))] for _ in range(3)]
        contexts = [rng.choice(stems) + [rng.randrange(4) for _ in range(rng.randrange(1, 5))]
                    for _ in range(rng.randrange(1, 7))]
        plan = plan_prefixes(contexts)
        _check(plan, contexts)
        order = sorted(contexts)
        best = None
        for cuts in itertools.chain.from_iterable(
                itertools.combinations(range(1, len(order)), k) for k in range(len(order))):
            bounds = [0, *cuts, len(order)]
            cost = 0
            for a, b in itertools.pairwise(bounds):
                run = order[a:b]
                shared = min(len(c) - 1 for c in run)
                for x, y in itertools.pairwise(run):
                    shared = min(shared, next((k for k, (p, q) in enumerate(zip(x, y, strict=False))
                                               if p != q), min(len(x), len(y))))
                if len(run) > 1 and shared <= 0:
                    cost = None
                    break
                cost += shared + sum(len(c) - shared for c in run)
            if cost is not None and (best is None or cost < best):
                best = cost
        assert _cost(plan, contexts) == best
        assert best <= sum(len(c) for c in contexts)


def test_an_empty_context_is_refused():
    with pytest.raises(ValueError, match="at least one token"):
        plan_prefixes([[1], []])

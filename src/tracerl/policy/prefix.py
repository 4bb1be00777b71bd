"""Shared prefixes of a batch of contexts, so a prefill runs each shared prefix once.

A rollout batch repeats itself: the G samples of a task share its prompt, on every turn
(after the first turn each row continues its own answer and observation, but the system
prompt, the tool list and the task are the group's), and every task shares the system
prompt. Prefilling each row's whole context redoes that work G times or more; on
SmolLM2 the prefill of turn 2 was most of a multi-turn rollout's time.

`plan_prefixes` partitions the distinct contexts into clusters, each with one shared
prefix: the prefill runs the prefixes once (one row per cluster), repeats their KV cache
rows for the cluster's members, and runs only each member's remainder (its suffix) on
top. The partition minimises the tokens both passes run, over runs of the contexts in
sorted order (where contexts with long common prefixes sit next to each other): a
context alone keeps all but its last token in the prefix pass, so the suffix pass is
never wider than the longest remainder of a shared one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PrefixPlan:
    prefixes: list[list[int]]
    """One shared prefix per cluster."""
    cluster: list[int]
    """For each context, its cluster."""
    cut: list[int]
    """For each context, where its suffix starts (the length of its cluster's prefix)."""

    def suffix(self, contexts: Sequence[Sequence[int]], i: int) -> list[int]:
        return list(contexts[i][self.cut[i]:])


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def plan_prefixes(contexts: Sequence[Sequence[int]]) -> PrefixPlan:
    """Clusters of `contexts` (each non-empty) with their shared prefixes; identical
    contexts share everything but their last token."""
    if any(not c for c in contexts):
        raise ValueError("every context needs at least one token")
    order = sorted(range(len(contexts)), key=lambda i: contexts[i])
    n = len(order)
    # lcp[k]: common prefix of the k-th and (k+1)-th contexts in sorted order
    lcp = [_lcp(contexts[order[k]], contexts[order[k + 1]]) for k in range(n - 1)]
    length = [len(contexts[i]) for i in order]
    # best[j]: fewest tokens to prefill the first j sorted contexts; a run k..j-1 costs
    # its shared prefix once plus every member's remainder (each keeps >= 1 token).
    best = [0] + [0] * n
    start = [0] * (n + 1)
    for j in range(1, n + 1):
        best[j], start[j] = best[j - 1] + length[j - 1], j - 1  # alone
        total, shared = length[j - 1], length[j - 1] - 1
        for k in range(j - 2, -1, -1):
            total += length[k]
            shared = min(shared, lcp[k], length[k] - 1)
            if shared <= 0:
                break
            cost = best[k] + shared + (total - shared * (j - k))
            if cost < best[j]:
                best[j], start[j] = cost, k
    runs = []
    j = n
    while j > 0:
        runs.append((start[j], j))
        j = start[j]
    runs.reverse()
    prefixes: list[list[int]] = []
    cluster = [0] * len(contexts)
    cut = [0] * len(contexts)
    for c, (k, j) in enumerate(runs):
        members = order[k:j]
        shared = min([length[k] - 1] + [min(lcp[m], length[m] - 1, length[m + 1] - 1)
                                        for m in range(k, j - 1)])
        prefixes.append(list(contexts[members[0]][:shared]))
        for i in members:
            cluster[i], cut[i] = c, shared
    return PrefixPlan(prefixes, cluster, cut)

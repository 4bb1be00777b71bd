"""Hopcroft-Karp maximum matching, checked against brute force and the greedy trap."""

from __future__ import annotations

import itertools
import random

import pytest

from tracerl.algorithms.bipartite import max_bipartite_matching


def _size(match):
    return sum(1 for v in match if v != -1)


def _brute_force(adj, n_right):
    best = 0
    n_left = len(adj)
    for perm in itertools.permutations(range(max(n_right, n_left)), n_left):
        best = max(best, sum(1 for u, v in enumerate(perm) if v < n_right and v in adj[u]))
    return best


def test_finds_matching_greedy_first_fit_misses():
    # left 0 fits right 0 and 1; left 1 fits only right 0: first fit pairs 0-0, strands 1.
    assert max_bipartite_matching([[0, 1], [0]], 2) == [1, 0]


def test_matching_is_valid_and_maximum_on_random_graphs():
    rng = random.Random(0)
    for _ in range(200):
        n_left, n_right = rng.randint(0, 5), rng.randint(0, 5)
        adj = [[v for v in range(n_right) if rng.random() < 0.4] for _ in range(n_left)]
        match = max_bipartite_matching(adj, n_right)
        used = [v for v in match if v != -1]
        assert len(used) == len(set(used))
        assert all(v == -1 or v in adj[u] for u, v in enumerate(match))
        assert _size(match) == _brute_force(adj, n_right)


def test_out_of_range_vertex_is_rejected():
    with pytest.raises(ValueError, match="outside"):
        max_bipartite_matching([[3]], 2)


def test_max_weight_assignment_beats_greedy():
    from tracerl.algorithms.bipartite import max_weight_assignment

    assert max_weight_assignment([[0.9, 0.8], [0.85, 0.0]]) == [1, 0]


def test_max_weight_assignment_equals_brute_force_on_random_matrices():
    import itertools
    import random

    from tracerl.algorithms.bipartite import max_weight_assignment

    rng = random.Random(0)
    for _ in range(200):
        n, m = rng.randint(1, 5), rng.randint(1, 5)
        w = [[rng.choice((0.0, 0.25, 0.5, 1.0, rng.random())) for _ in range(m)]
             for _ in range(n)]
        got = max_weight_assignment(w)
        assert len({j for j in got if j >= 0}) == min(n, m)
        value = sum(w[i][j] for i, j in enumerate(got) if j >= 0)
        size = max(n, m)  # pad to a square of zero weights: every assignment is a permutation
        sq = [[w[i][j] if i < n and j < m else 0.0 for j in range(size)] for i in range(size)]
        best = max(sum(sq[i][p[i]] for i in range(size))
                   for p in itertools.permutations(range(size)))
        assert value == pytest.approx(best)


def test_max_weight_assignment_rejects_ragged_rows():
    from tracerl.algorithms.bipartite import max_weight_assignment

    with pytest.raises(ValueError, match="rectangular"):
        max_weight_assignment([[1.0], [1.0, 2.0]])

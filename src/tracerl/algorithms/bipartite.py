"""Maximum bipartite matching (Hopcroft-Karp) and maximum-weight assignment (Hungarian),
used to pair tool calls.

Greedy first-fit pairing is the classic bug of trajectory-match libraries: with
reference calls R1, R2 and output calls O1, O2 where O1 fits both and O2 fits only R1,
first fit pairs O1-R1 and leaves O2 alone, failing a trajectory that does match
(O1-R2, O2-R1). A maximum matching never does that.

Hopcroft & Karp (1973), "An n^{5/2} algorithm for maximum matchings in bipartite
graphs": BFS builds layers of shortest augmenting paths, DFS augments along a maximal
set of vertex-disjoint ones; O(E sqrt(V)).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

INF = float("inf")


def max_bipartite_matching(adjacency: Sequence[Sequence[int]], n_right: int) -> list[int]:
    """`adjacency[u]` lists the right vertices left vertex u may pair with.

    Returns `match_left` with `match_left[u]` = the right vertex paired with u, or -1.
    """
    n_left = len(adjacency)
    for u, row in enumerate(adjacency):
        for v in row:
            if not 0 <= v < n_right:
                raise ValueError(f"adjacency[{u}] names right vertex {v}, outside 0..{n_right - 1}")
    match_left = [-1] * n_left
    match_right = [-1] * n_right
    dist = [0.0] * n_left

    def bfs() -> bool:
        queue: deque[int] = deque()
        for u in range(n_left):
            dist[u] = 0.0 if match_left[u] == -1 else INF
            if match_left[u] == -1:
                queue.append(u)
        found = False
        while queue:
            u = queue.popleft()
            for v in adjacency[u]:
                w = match_right[v]
                if w == -1:
                    found = True
                elif dist[w] == INF:
                    dist[w] = dist[u] + 1
                    queue.append(w)
        return found

    while bfs():
        for u in range(n_left):
            if match_left[u] == -1:
                _augment(u, adjacency, match_left, match_right, dist)
    return match_left


def _augment(u: int, adjacency: Sequence[Sequence[int]], match_left: list[int],
             match_right: list[int], dist: list[float]) -> bool:
    """Hopcroft-Karp's DFS: an augmenting path from left vertex u along the BFS layers,
    applied when found. (Module-level: a nested recursive function would be a reference
    cycle per call, garbage only the cyclic collector frees.)"""
    for v in adjacency[u]:
        w = match_right[v]
        if w == -1 or (dist[w] == dist[u] + 1
                       and _augment(w, adjacency, match_left, match_right, dist)):
            match_left[u], match_right[v] = v, u
            return True
    dist[u] = INF  # dead end in this phase
    return False


def max_weight_assignment(weights: Sequence[Sequence[float]]) -> list[int]:
    """The assignment of rows to distinct columns with the largest total weight
    (Hungarian algorithm, Kuhn 1955 / Munkres 1957, in the O(n^2 m) potentials form).

    `weights` is n rows of m numbers. Returns `col_of[row]`, -1 for rows left out when
    n > m. Greedy best-first pairing is not optimal (rows A, B; A scores 0.9 / 0.8 on
    columns 1 / 2, B scores 0.85 / 0: greedy gives A-1 and 0.9, the optimum A-2, B-1
    and 1.65); this is.
    """
    n = len(weights)
    m = len(weights[0]) if n else 0
    if any(len(row) != m for row in weights):
        raise ValueError("max_weight_assignment needs a rectangular weight matrix")
    if n > m:  # solve the transpose: every column gets a row
        col_of_t = max_weight_assignment([[weights[i][j] for i in range(n)] for j in range(m)])
        out = [-1] * n
        for j, i in enumerate(col_of_t):
            out[i] = j
        return out
    # Minimise cost = -weight; u, v potentials; p[j] = row matched to column j (1-based).
    u, v = [0.0] * (n + 1), [0.0] * (m + 1)
    p, way = [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv, used = [INF] * (m + 1), [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], INF, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = -weights[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    col_of = [-1] * n
    for j in range(1, m + 1):
        if p[j]:
            col_of[p[j] - 1] = j - 1
    return col_of

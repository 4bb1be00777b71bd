"""Maximum bipartite matching (Hopcroft-Karp), used to pair tool calls.

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

    def dfs(u: int) -> bool:
        for v in adjacency[u]:
            w = match_right[v]
            if w == -1 or (dist[w] == dist[u] + 1 and dfs(w)):
                match_left[u], match_right[v] = v, u
                return True
        dist[u] = INF  # dead end in this phase
        return False

    while bfs():
        for u in range(n_left):
            if match_left[u] == -1:
                dfs(u)
    return match_left

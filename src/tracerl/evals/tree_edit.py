"""Tree edit distance between ordered labelled trees (Zhang & Shasha, 1989, "Simple fast
algorithms for the editing distance between trees and related problems", SIAM J.
Comput. 18(6)), with unit costs: deleting, inserting or relabelling a node costs 1.

Nodes are numbered in postorder; `lld[i]` is the leftmost leaf descendant of node i and
the keyroots are the nodes with no left sibling path to an ancestor of equal lld. The
forest distance table is filled once per pair of keyroots: O(n1 n2 min(depth, leaves)^2).

`json_tree` turns a JSON value into such a tree so that structured outputs can be
compared by the edits that separate them: an object is a node "{}" whose children are
its keys ("key:<name>", sorted, since key order means nothing in JSON), each with its
value as only child; an array is "[]" with its items in order; a scalar is a leaf
labelled by its JSON type and value (1 and 1.0 are one number; true is not 1).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Tree:
    label: str
    children: tuple[Tree, ...] = ()


def json_tree(value: Any) -> Tree:
    if isinstance(value, dict):
        return Tree("{}", tuple(Tree(f"key:{k}", (json_tree(value[k]),)) for k in sorted(value)))
    if isinstance(value, list):
        return Tree("[]", tuple(json_tree(v) for v in value))
    if isinstance(value, bool) or value is None:
        return Tree(json.dumps(value))
    if isinstance(value, (int, float)):
        number = int(value) if float(value).is_integer() else value
        return Tree(f"num:{number!r}")
    return Tree(f"str:{value}")


def _postorder(root: Tree) -> tuple[list[str], list[int]]:
    """Labels in postorder and the leftmost leaf descendant of each node."""
    labels: list[str] = []
    lld: list[int] = []

    def walk(node: Tree) -> int:
        first = -1
        for child in node.children:
            leaf = walk(child)
            if first == -1:
                first = leaf
        labels.append(node.label)
        lld.append(first if first != -1 else len(labels) - 1)
        return lld[-1]

    walk(root)
    return labels, lld


def _keyroots(lld: Sequence[int]) -> list[int]:
    """For each distinct lld the highest node having it, ascending."""
    last: dict[int, int] = {}
    for i, leaf in enumerate(lld):
        last[leaf] = i
    return sorted(last.values())


def tree_edit_distance(a: Tree, b: Tree) -> int:
    """Minimum unit-cost node deletions, insertions and relabellings turning a into b."""
    la, lld_a = _postorder(a)
    lb, lld_b = _postorder(b)
    dist = [[0] * len(lb) for _ in la]
    for i in _keyroots(lld_a):
        for j in _keyroots(lld_b):
            if lld_a[i] == i and lld_b[j] == j:  # two leaves: a relabel or nothing
                dist[i][j] = int(la[i] != lb[j])
            else:
                _forest(i, j, la, lld_a, lb, lld_b, dist)
    return dist[-1][-1]


def _forest(i: int, j: int, la: list[str], lld_a: list[int], lb: list[str],
            lld_b: list[int], dist: list[list[int]]) -> None:
    """Fill dist for all subtree pairs rooted on the leftmost paths of keyroots i, j."""
    ai, bj = lld_a[i], lld_b[j]
    rows, cols = i - ai + 2, j - bj + 2
    fd = [[0] * cols for _ in range(rows)]  # fd[x][y]: forest a[ai:ai+x] vs b[bj:bj+y]
    for x in range(1, rows):
        fd[x][0] = fd[x - 1][0] + 1
    for y in range(1, cols):
        fd[0][y] = fd[0][y - 1] + 1
    for x in range(1, rows):
        na = ai + x - 1
        label, row_dist = la[na], dist[na]
        cur, up = fd[x], fd[x - 1]
        a_is_tree = lld_a[na] == ai
        p_row = fd[lld_a[na] - ai]  # the forest left of na's subtree
        for y in range(1, cols):
            nb = bj + y - 1
            best = min(up[y], cur[y - 1]) + 1  # delete na, or insert nb
            if a_is_tree and lld_b[nb] == bj:  # both are whole trees: the general case
                best = min(best, up[y - 1] + (label != lb[nb]))
                row_dist[nb] = best
            else:
                best = min(best, p_row[lld_b[nb] - bj] + row_dist[nb])
            cur[y] = best


def tree_size(t: Tree) -> int:
    return 1 + sum(tree_size(c) for c in t.children)

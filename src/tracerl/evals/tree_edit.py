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
from operator import ne
from typing import Any


@dataclass(frozen=True)
class Tree:
    label: str
    children: tuple[Tree, ...] = ()


def _leaf_label(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        number = int(value) if float(value).is_integer() else value
        return f"num:{number!r}"
    return f"str:{value}"


def json_tree(value: Any) -> Tree:
    if isinstance(value, dict):
        return Tree("{}", tuple(Tree(f"key:{k}", (json_tree(value[k]),)) for k in sorted(value)))
    if isinstance(value, list):
        return Tree("[]", tuple(json_tree(v) for v in value))
    return Tree(_leaf_label(value))


@dataclass(frozen=True)
class Postorder:
    """A tree as Zhang-Shasha reads it: labels in postorder, each node's leftmost leaf
    descendant, and the keyroots (for each distinct lld the highest node having it)."""

    labels: tuple[str, ...]
    lld: tuple[int, ...]
    keyroots: tuple[int, ...]

    @classmethod
    def of(cls, labels: list[str], lld: list[int]) -> Postorder:
        last: dict[int, int] = {}
        for i, leaf in enumerate(lld):
            last[leaf] = i
        return cls(tuple(labels), tuple(lld), tuple(sorted(last.values())))


def postorder(root: Tree) -> Postorder:
    """The postorder arrays of a Tree."""
    labels: list[str] = []
    lld: list[int] = []
    _walk_tree(root, labels, lld)
    return Postorder.of(labels, lld)


def _walk_tree(node: Tree, labels: list[str], lld: list[int]) -> int:
    """Append `node`'s subtree in postorder; its leftmost leaf's index. (Module-level
    recursion: a nested recursive function is a reference cycle per call, garbage that
    only the cyclic collector frees.)"""
    first = -1
    for child in node.children:
        leaf = _walk_tree(child, labels, lld)
        if first == -1:
            first = leaf
    labels.append(node.label)
    lld.append(first if first != -1 else len(labels) - 1)
    return lld[-1]


def json_postorder(value: Any) -> Postorder:
    """`postorder(json_tree(value))`, built from the JSON value without the Tree."""
    labels: list[str] = []
    lld: list[int] = []
    _walk_json(value, labels, lld)
    return Postorder.of(labels, lld)


def _walk_json(v: Any, labels: list[str], lld: list[int]) -> int:
    """Append the JSON value's tree in postorder (as `_walk_tree` on `json_tree(v)`);
    its leftmost leaf's index."""
    first = -1
    if isinstance(v, dict):
        for k in sorted(v):
            child = _walk_json(v[k], labels, lld)
            labels.append(f"key:{k}")
            lld.append(child)
            first = child if first == -1 else first
        label = "{}"
    elif isinstance(v, list):
        for x in v:
            leaf = _walk_json(x, labels, lld)
            first = leaf if first == -1 else first
        label = "[]"
    else:
        label = _leaf_label(v)
    labels.append(label)
    lld.append(first if first != -1 else len(labels) - 1)
    return lld[-1]


def tree_edit_distance(a: Tree, b: Tree) -> int:
    """Minimum unit-cost node deletions, insertions and relabellings turning a into b."""
    return postorder_distance(postorder(a), postorder(b))


def postorder_distance(a: Postorder, b: Postorder) -> int:
    """`tree_edit_distance` of two trees given as postorder arrays."""
    la, lld_a, lb, lld_b = a.labels, a.lld, b.labels, b.lld
    if lld_a == lld_b:  # the same shape (postorder labels and lld fix a tree)
        relabels = sum(map(ne, la, lb))
        if relabels <= 1:  # the same tree, or one relabel: no edit script is shorter
            return relabels  # (e.g. an answer's JSON with one wrong value)
    dist = [[0] * len(lb) for _ in la]
    b_roots = []
    for j in b.keyroots:  # per keyroot of b: its leftmost path's labels, trees and forests
        bj = lld_b[j]
        span = range(bj, j + 1)
        b_roots.append((j, bj, [lb[k] for k in span], [lld_b[k] == bj for k in span],
                        [lld_b[k] - bj for k in span]))
    for i in a.keyroots:
        ai = lld_a[i]
        for j, bj, labels_b, whole_b, left_b in b_roots:
            if ai == i and bj == j:  # two leaves: a relabel or nothing
                dist[i][j] = int(la[i] != lb[j])
            else:
                _forest(ai, i, la, lld_a, bj, labels_b, whole_b, left_b, dist)
    return dist[-1][-1]


def _forest(ai: int, i: int, la: Sequence[str], lld_a: Sequence[int], bj: int,
            labels_b: list[str], whole_b: list[bool], left_b: list[int],
            dist: list[list[int]]) -> None:
    """Fill dist for all subtree pairs rooted on the leftmost paths of keyroots i and j
    (b's side given as its leftmost path from bj: labels, whether node bj + k roots a
    whole tree of the forest, and where its subtree starts relative to bj)."""
    cols = len(labels_b) + 1
    fd = [list(range(cols))]  # fd[x][y]: forest a[ai:ai+x] vs b[bj:bj+y]
    for x in range(1, i - ai + 2):
        na = ai + x - 1
        label, row_dist, up = la[na], dist[na], fd[x - 1]
        cur = [x] * cols
        p_row = fd[lld_a[na] - ai]  # the forest left of na's subtree
        left = x
        if lld_a[na] == ai:  # na roots a whole tree of a's forest
            for k in range(cols - 1):
                best = up[k + 1] + 1  # delete na
                if left + 1 < best:
                    best = left + 1  # insert b's node
                if whole_b[k]:  # both are whole trees: the general case
                    sub = up[k] + (label != labels_b[k])
                    if sub < best:
                        best = sub
                    row_dist[bj + k] = best
                else:
                    sub = p_row[left_b[k]] + row_dist[bj + k]
                    if sub < best:
                        best = sub
                cur[k + 1] = left = best
        else:
            for k in range(cols - 1):
                best = up[k + 1] + 1
                if left + 1 < best:
                    best = left + 1
                sub = p_row[left_b[k]] + row_dist[bj + k]
                if sub < best:
                    best = sub
                cur[k + 1] = left = best
        fd.append(cur)


def tree_size(t: Tree) -> int:
    return 1 + sum(tree_size(c) for c in t.children)

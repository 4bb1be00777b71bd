"""Zhang-Shasha tree edit distance against the paper's example and a brute force."""

from __future__ import annotations

import pytest

from tracerl.evals.tree_edit import Tree, json_tree, tree_edit_distance, tree_size

T = Tree


def test_the_papers_example():
    # Zhang & Shasha (1989), fig. 3: f(d(a, c(b)), e) -> f(c(d(a, b)), e) costs 2
    a = T("f", (T("d", (T("a"), T("c", (T("b"),)))), T("e")))
    b = T("f", (T("c", (T("d", (T("a"), T("b"))),)), T("e")))
    assert tree_edit_distance(a, b) == 2
    assert tree_edit_distance(a, a) == 0


@pytest.mark.parametrize(("a", "b", "d"), [
    (T("a"), T("b"), 1),
    (T("a", (T("b"), T("c"))), T("a"), 2),
    (T("a"), T("a", (T("b"), T("c"))), 2),
    (T("a", (T("b"), T("c"))), T("a", (T("c"), T("b"))), 2),
    (T("r", (T("x", (T("y"),)),)), T("r", (T("y"),)), 1),  # delete x, y moves up
])
def test_small_cases_by_hand(a, b, d):
    assert tree_edit_distance(a, b) == d == tree_edit_distance(b, a)


def test_distance_is_at_most_delete_all_then_insert_all():
    a, b = json_tree({"k": [1, 2, {"z": None}]}), json_tree(["x", "y"])
    assert tree_edit_distance(a, b) <= tree_size(a) + tree_size(b) - 1


def test_json_tree_labels():
    assert json_tree({"b": 1, "a": True}) == T("{}", (
        T("key:a", (T("true"),)), T("key:b", (T("num:1"),))))
    assert json_tree(1.0) == json_tree(1) != json_tree(True)
    assert json_tree("1") != json_tree(1)


def _forest_distance(f: tuple[Tree, ...], g: tuple[Tree, ...], memo: dict) -> int:
    """The recursive definition (rightmost roots), memoised: the reference."""
    key = (f, g)
    if key not in memo:
        if not f or not g:
            memo[key] = sum(tree_size(t) for t in f + g)
        else:
            v, w = f[-1], g[-1]
            memo[key] = min(
                _forest_distance(f[:-1] + v.children, g, memo) + 1,
                _forest_distance(f, g[:-1] + w.children, memo) + 1,
                _forest_distance(v.children, w.children, memo)
                + _forest_distance(f[:-1], g[:-1], memo) + (v.label != w.label))
    return memo[key]


def test_equals_the_recursive_definition_on_random_trees():
    import random

    rng = random.Random(0)

    def grow(budget: int) -> Tree:
        kids = []
        while budget > 1 and rng.random() < 0.6:
            size = rng.randint(1, budget - 1)
            kids.append(grow(size))
            budget -= size
        return Tree(rng.choice("abc"), tuple(kids))

    memo: dict = {}
    for _ in range(150):
        a, b = grow(rng.randint(1, 8)), grow(rng.randint(1, 8))
        assert tree_edit_distance(a, b) == _forest_distance((a,), (b,), memo), (a, b)


def test_json_postorder_equals_the_tree_walk():
    from tracerl.evals.tree_edit import json_postorder, postorder

    for value in ({}, [], None, 1.5, "é", {"b": [1, {"c": []}], "a": True},
                  [[1, [2]], {"x": {"y": {"z": None}}}, 1.0, 2**70]):
        assert json_postorder(value) == postorder(json_tree(value)), value


def test_json_distance_equals_the_recursive_definition_on_random_json():
    import random

    from tracerl.evals.tree_edit import json_postorder, postorder_distance

    rng = random.Random(1)

    def grow(depth: int):  # noqa: ANN202 - a JSON value
        kind = rng.random()
        if depth == 0 or kind < 0.4:
            return rng.choice([1, 2.0, True, None, "a", "é", 0])
        if kind < 0.7:
            return [grow(depth - 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice("abc"): grow(depth - 1) for _ in range(rng.randint(0, 3))}

    memo: dict = {}
    for _ in range(150):
        a, b = grow(3), grow(3)
        want = _forest_distance((json_tree(a),), (json_tree(b),), memo)
        assert postorder_distance(json_postorder(a), json_postorder(b)) == want, (a, b)


def test_same_shape_trees_equal_the_recursive_definition():
    """One relabel is answered without the table (distance 1); same shapes with more
    relabels, whose distance can be smaller than their count, go through it."""
    import random

    from tracerl.evals.tree_edit import postorder, postorder_distance

    rng = random.Random(2)

    def grow(budget: int) -> Tree:
        kids = []
        while budget > 1 and rng.random() < 0.6:
            size = rng.randint(1, budget - 1)
            kids.append(grow(size))
            budget -= size
        return Tree(rng.choice("abc"), tuple(kids))

    def relabel(t: Tree, odds: float) -> Tree:
        label = rng.choice("abcd") if rng.random() < odds else t.label
        return Tree(label, tuple(relabel(c, odds) for c in t.children))

    memo: dict = {}
    for _ in range(150):
        a = grow(rng.randint(1, 9))
        b = relabel(a, rng.choice([0.1, 0.5]))
        want = _forest_distance((a,), (b,), memo)
        assert postorder_distance(postorder(a), postorder(b)) == want, (a, b)
    r = Tree("r", (Tree("x"), Tree("y"), Tree("z")))
    s = Tree("r", (Tree("y"), Tree("z"), Tree("w")))  # 3 relabels, distance 2
    assert tree_edit_distance(r, s) == 2 == _forest_distance((r,), (s,), memo)

"""The split: a pure function of the id, scenarios kept together, unseen APIs kept out."""

import pytest

from tracerl.envs.bfcl.data import expand_categories, load_category
from tracerl.envs.bfcl.family import BfclFamily
from tracerl.envs.bfcl.split import hashed_heldout, split_key


@pytest.fixture(scope="module")
def family():
    return BfclFamily(("simple_python", "irrelevance", "live_relevance", "multi_turn_*"))


def test_split_is_a_pure_function_of_the_id():
    assert split_key("multi_turn_miss_param_17") == split_key("multi_turn_base_17") == \
        "multi_turn_17"
    assert split_key("live_simple_3-2-1") == "live_simple_3-2-1"
    ids = [e.id for e in load_category("simple_python")]
    share = sum(map(hashed_heldout, ids)) / len(ids)
    assert 0.13 < share < 0.27
    assert [hashed_heldout(i) for i in ids] == [hashed_heldout(i) for i in ids]


def test_sides_are_disjoint_and_a_scenario_is_on_one_side(family):
    seen = {}
    for name, entries in family.splits.items():
        for e in entries:
            assert seen.setdefault(e.id, name) == name
            if e.multi_turn:
                assert seen.setdefault(split_key(e.id), name) == name


def test_unseen_apis_never_reach_training(family):
    assert family.entries("unseen_api")
    assert all("TicketAPI" in e.involved_classes for e in family.entries("unseen_api"))
    for split in ("train", "heldout"):
        assert not any("TicketAPI" in e.involved_classes for e in family.entries(split))


def test_train_holds_only_demonstrable_entries(family):
    assert not any(e.category == "live_relevance" for e in family.entries("train"))
    assert any(e.category == "live_relevance" for e in family.entries("heldout"))


def test_tasks_per_category_and_bad_names(family):
    tasks = family.tasks_per_category("heldout", 3)
    cats = [t.metadata["category"] for t in tasks]
    assert cats == sorted(cats, key=list(family.categories).index)
    assert all(cats.count(c) <= 3 for c in set(cats))
    # the trainer's held-out set: the same ids whatever the seed, spread over categories,
    # and the first of what `tracerl eval --tasks-per-category` scores
    n = 2 * len(set(cats)) + 1
    chosen = family.eval_tasks("heldout", n)
    assert len(chosen) == n and {t.id for t in chosen} <= {
        t.id for t in family.tasks_per_category("heldout", 3)}
    shares = [c for c in (t.metadata["category"] for t in chosen)]
    assert sorted({shares.count(c) for c in set(shares)}) == [2, 3]
    assert len(family.eval_tasks("heldout", 10**6)) == len(family.entries("heldout"))
    assert family.tasks("train", 5, 1) == family.tasks("train", 5, 1)
    with pytest.raises(ValueError, match="unknown category"):
        expand_categories(["simple_java"])
    with pytest.raises(ValueError, match="split must be one of"):
        family.tasks("test", 1, 0)


def test_train_categories_narrow_training_not_evaluation():
    family = BfclFamily(("simple_python", "parallel", "multi_turn_base"),
                        train_categories=("simple_*",))
    drawn = family.tasks("train", 40, seed=3)
    assert {t.metadata["category"] for t in drawn} == {"simple_python"}
    held = {t.metadata["category"] for t in family.eval_tasks("heldout", 30)}
    assert held == {"simple_python", "parallel", "multi_turn_base"}
    # every category by default
    assert BfclFamily(("simple_python", "parallel")).train_categories == (
        "simple_python", "parallel")
    with pytest.raises(ValueError, match=r"train_categories \['multiple'\] are not among"):
        BfclFamily(("simple_python",), train_categories=("multiple",))

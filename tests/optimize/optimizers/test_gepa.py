from tracerl.optimize.history import Evaluation
from tracerl.optimize.optimizers.gepa import ancestors, merge, pareto_front
from tracerl.optimize.prompt import Prompt


def _entry(index, scores, parents=()):
    return Evaluation(index, Prompt(), "x", parents, "scored", None, scores, True, 0, 0, 0, 0, 0)


def test_the_front_holds_every_candidate_that_leads_on_some_task():
    pool = [_entry(0, {"a": 1.0, "b": 0.0, "c": 0.0}),
            _entry(1, {"a": 0.0, "b": 1.0, "c": 0.0}),
            _entry(2, {"a": 0.5, "b": 0.5, "c": 0.0})]
    # c ties at 0 for all three; 2 leads nowhere else, so only the tie keeps it on.
    assert pareto_front(pool) == {0: 2, 1: 2, 2: 1}
    assert pareto_front(pool[:2] + [_entry(2, {"a": None, "b": None})]) == {0: 2, 1: 2}


def test_merge_takes_each_slot_that_changed_from_the_ancestor():
    base = Prompt(system="s0", instruction="i0")
    a = Prompt(system="s1", instruction="i0", examples=("e1",))
    b = Prompt(system="s0", instruction="i2")
    assert merge(base, a, b, a_better=True) == Prompt(system="s1", instruction="i2",
                                                       examples=("e1",))
    both = Prompt(system="s2", instruction="i0")
    assert merge(base, a, both, a_better=False).system == "s2"


def test_ancestors_walk_every_parent():
    history = [_entry(0, {}), _entry(1, {}, (0,)), _entry(2, {}, (0,)), _entry(3, {}, (1, 2))]
    assert ancestors(history, 3) == [3, 1, 2, 0]

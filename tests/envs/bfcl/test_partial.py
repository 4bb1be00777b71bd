"""`task.bfcl.reward=partial`: credit for near misses, nothing for the hacks, 1.0 only where
BFCL accepts (so held-out success, a reward of 1.0, is still BFCL's accuracy)."""

import pytest

from tracerl.envs.bfcl.data import entry_by_id
from tracerl.envs.bfcl.family import BfclFamily
from tracerl.envs.bfcl.hacks import DONE, HACKS, call_text, play
from tracerl.envs.bfcl.partial import PARTIAL_CAP, call_credit, partial_credit
from tracerl.envs.bfcl.reward import BfclPartialReward, BfclReward
from tracerl.rewards.audit import audit
from tracerl.train.evaluate import is_success

PARTIAL = BfclPartialReward()


def played(category: str, entry_id: str, calls: list[tuple[str, dict]]):
    entry = entry_by_id(category, entry_id)
    traj = play(entry, [call_text(n, a) for n, a in calls] + [DONE])
    traj.outcome_reward = PARTIAL(traj)
    return traj


def test_an_accepted_answer_earns_one_and_counts_as_success():
    traj = played("simple_python", "simple_python_0",
                  [("calculate_triangle_area", {"base": 10, "height": 5})])
    assert traj.outcome_reward == 1.0 == BfclReward()(traj)
    assert is_success(traj)


def test_a_near_miss_earns_its_share_of_the_cap_and_is_no_success():
    # base right, height wrong: one of the two needed slots
    traj = played("simple_python", "simple_python_0",
                  [("calculate_triangle_area", {"base": 10, "height": 6})])
    assert BfclReward()(traj) == 0.0
    assert traj.outcome_reward == pytest.approx(PARTIAL_CAP / 2)
    assert not is_success(traj)
    # a wrong optional value is a slot too: base, height right, unit wrong
    traj = played("simple_python", "simple_python_0",
                  [("calculate_triangle_area", {"base": 10, "height": 5, "unit": "km"})])
    assert traj.outcome_reward == pytest.approx(PARTIAL_CAP * 2 / 3)


def test_an_empty_call_earns_nothing_for_optional_parameters_it_leaves_out():
    # multiple_0 needs side1-3; get_area / get_perimeter / get_angles are optional
    traj = played("multiple", "multiple_0", [("triangle_properties.get", {})])
    assert traj.outcome_reward == 0.0
    traj = played("multiple", "multiple_0",
                  [("triangle_properties.get", {"side1": 5, "side2": 4, "side3": 30})])
    assert traj.outcome_reward == pytest.approx(PARTIAL_CAP * 2 / 3)


def test_the_other_offered_function_earns_nothing():
    traj = played("multiple", "multiple_0",
                  [("circle_properties.get", {"side1": 5, "side2": 4, "side3": 3})])
    assert traj.outcome_reward == 0.0


def test_parallel_calls_are_paired_by_the_best_match_in_any_order():
    # the second call is right, the first has one of two slots right
    traj = played("parallel", "parallel_0",
                  [("spotify.play", {"artist": "Maroon 5", "duration": 15}),
                   ("spotify.play", {"artist": "Taylor Swift", "duration": 99})])
    assert traj.outcome_reward == pytest.approx(PARTIAL_CAP * (1 + 0.5) / 2)


def test_shapes_that_are_not_an_answer_earn_nothing():
    entry = entry_by_id("parallel", "parallel_0")
    good = [{"spotify.play": {"artist": "Taylor Swift", "duration": 20}},
            {"spotify.play": {"artist": "Maroon 5", "duration": 1}}]
    assert partial_credit("parallel", list(entry.functions), entry.answer, good) > 0
    assert partial_credit("parallel", list(entry.functions), entry.answer, good[:1]) == 0.0
    assert partial_credit("parallel", list(entry.functions), entry.answer,
                          [good[0], good[0]]) == 0.0  # a duplicate
    assert partial_credit("parallel", list(entry.functions), entry.answer, None) == 0.0
    assert partial_credit("parallel", list(entry.functions), entry.answer,
                          [{"not_offered": {"artist": "Maroon 5"}}, good[0]]) == 0.0
    assert partial_credit("parallel", list(entry.functions), entry.answer,
                          [["not", "a", "call"]]) == 0.0  # type: ignore[list-item]
    irrelevance = entry_by_id("irrelevance", "irrelevance_0")
    assert partial_credit("irrelevance", list(irrelevance.functions), irrelevance.answer,
                          [{"x": {}}]) == 0.0


def test_call_credit_counts_given_and_needed_slots():
    doc = entry_by_id("simple_python", "simple_python_0").functions[0]
    answer = {"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}
    assert call_credit(doc, {"calculate_triangle_area": {"base": 10, "height": 5}}, answer) == 1
    # an argument the doc does not have is a wrong slot
    assert call_credit(doc, {"calculate_triangle_area": {"base": 10, "height": 5, "x": 1}},
                       answer) == pytest.approx(2 / 3)
    # BFCL's type rule: a string for an integer is wrong
    assert call_credit(doc, {"calculate_triangle_area": {"base": "10", "height": 5}},
                       answer) == pytest.approx(1 / 2)
    assert call_credit(None, {"calculate_triangle_area": {}}, answer) == 0.0


def test_the_partial_reward_pays_none_of_the_known_hacks():
    report = audit(BfclPartialReward(), hacks=HACKS)
    assert report.ok and len(report.results) == len(HACKS)
    assert all(r.verdict == "clean" for r in report.results), report.summary()


def test_multi_turn_episodes_get_the_verdict_alone():
    hack = next(h for h in HACKS if h.name == "calls_that_raise")
    assert PARTIAL(hack.trajectory()) == 0.0


def test_the_family_builds_the_named_reward_and_refuses_others():
    family = BfclFamily(categories=("simple_python",), reward_name="partial")
    assert isinstance(family.reward, BfclPartialReward)
    assert isinstance(BfclFamily(categories=("simple_python",)).reward, BfclReward)
    with pytest.raises(ValueError, match="reward must be one of.*'gold'"):
        BfclFamily(categories=("simple_python",), reward_name="gold")


def test_tracerl_audit_runs_the_hacks_against_either_bfcl_reward(capsys):
    import argparse

    from tracerl.cli.audit import run

    for name in ("bfcl", "bfcl_partial"):
        args = argparse.Namespace(reward=name, category=None, timeout=2.0, json=False,
                                  verbose=False)
        assert run(args) == 0
        assert f"{name}: {len(HACKS)} hacks: {len(HACKS)} clean" in capsys.readouterr().out


def test_the_config_key_reaches_the_family():
    from tracerl.envs.registry import FamilyContext, build_family
    from tracerl.train import configlib
    from tracerl.train.config import TrainConfig

    cfg = configlib.load(TrainConfig, None, ["task.family=bfcl", "task.bfcl.reward=partial",
                                             "task.bfcl.categories=[simple_python]"])
    family = build_family("bfcl", cfg.task.section(), FamilyContext())
    assert isinstance(family.reward, BfclPartialReward)

import random

import pytest

from tracerl.credit.calibration import calibrate, sample_states, sign_accuracy, spearman
from tracerl.credit.evaluators import SubgoalEvaluator
from tracerl.credit.montecarlo import MonteCarloEvaluator


def test_spearman_hand_computed():
    # d = (0, 1, 1): 1 - 6 * 2 / (3 * 8) = 0.5
    assert spearman([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)


def test_spearman_gives_ties_average_ranks():
    # ranks (1.5, 1.5, 3) vs (1, 2, 3): 1.5 / sqrt(1.5 * 2)
    assert spearman([1, 1, 2], [1, 2, 3]) == pytest.approx(1.5 / 3 ** 0.5)


def test_spearman_of_a_constant_is_zero():
    assert spearman([1, 1, 1], [1, 2, 3]) == 0.0


def test_sign_accuracy_skips_ties():
    assert sign_accuracy([0.9, 0.1, 0.9, 0.4], [0.5, -0.2, -0.1, 0.0]) == pytest.approx(2 / 3)


@pytest.fixture(scope="module")
def states(maze_runner):
    runner, family = maze_runner(noise=0.15, group_size=4, seed=1)
    groups = runner.run(family.tasks("train", 6, seed=0))
    trajs = [t for g in groups for t in g.trajectories]
    balanced = sample_states(trajs, 24, random.Random(0), SubgoalEvaluator(family.subgoal))
    return runner, family, balanced


def test_balanced_states_cover_both_verdicts(states):
    _, family, sampled = states
    verdicts = [family.subgoal(t, k) for t, k in sampled]
    assert len(sampled) == 24 and 0.0 in verdicts and 1.0 in verdicts


@pytest.mark.slow  # Monte Carlo rollouts from 24 states
def test_calibration_trusts_a_correct_evaluator(states):
    runner, family, sampled = states
    report = calibrate(SubgoalEvaluator(family.subgoal), MonteCarloEvaluator(runner, 8),
                       sampled, min_spearman=0.3)
    assert report.trusted, report
    assert report.accuracy > 0.7


@pytest.mark.slow  # Monte Carlo rollouts from 24 states
def test_calibration_falls_back_on_a_wrong_evaluator(states, caplog):
    runner, family, sampled = states
    inverted = SubgoalEvaluator(lambda t, k: 1.0 - family.subgoal(t, k), name="inverted")
    report = calibrate(inverted, MonteCarloEvaluator(runner, 8), sampled, min_spearman=0.3)
    assert not report.trusted
    assert report.spearman < 0
    assert "falling back to trajectory-level credit" in caplog.text

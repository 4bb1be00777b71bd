"""Deliberately wrong evaluators on `doors`, and calibration catching them.

A scripted doors policy behind the sampler interface drives the real RolloutRunner, env
and reward: it presses the key the last sign asks for, or with probability `noise`
waits or presses a wrong key."""

import random
import re

import pytest

from tracerl.credit.calibration import calibrate, sample_states, spearman
from tracerl.credit.evaluators import SubgoalEvaluator
from tracerl.credit.faults import HardInvertedEvaluator, InvertedEvaluator
from tracerl.credit.montecarlo import MonteCarloEvaluator
from tracerl.envs.doors import FILLER, KEYS, DoorsFamily, key_for
from tracerl.envs.maze import MazeFamily
from tracerl.policy.model import STOP_TOKENS
from tracerl.policy.sampler import Sample, SamplingParams
from tracerl.policy.tokenizer import build_char_tokenizer
from tracerl.rollout.render import ChatRenderer
from tracerl.rollout.runner import RolloutConfig, RolloutRunner
from tracerl.train.config import CreditConfig
from tracerl.train.rl_step import make_evaluator
from tracerl.types import Task, Trajectory, Turn

SIGN = re.compile(r"(\w)<\|im_end\|>\n<\|im_start\|>assistant\n$")


class ScriptedDoorsSampler:
    def __init__(self, renderer: ChatRenderer, noise: float, seed: int) -> None:
        self.renderer = renderer
        self.noise = noise
        self.rng = random.Random(seed)

    def press(self, context_text: str) -> str:
        key = key_for(SIGN.findall(context_text)[-1])
        if self.rng.random() >= self.noise:
            return key
        return self.rng.choice([FILLER] + [k for k in KEYS if k != key])

    def generate(self, contexts: list[list[int]], params: SamplingParams,
                 budgets: list[int] | None = None) -> list[Sample]:
        out = []
        for c in contexts:
            ids = self.renderer.encode(self.press(self.renderer.decode(c)) + "<|im_end|>")
            out.append(Sample(ids, [0.0] * len(ids), "stop"))
        return out


def _runner(family: DoorsFamily, noise: float, seed: int = 0) -> RolloutRunner:
    tok = build_char_tokenizer()
    renderer = ChatRenderer(tok)
    stops = tuple(tok.convert_tokens_to_ids(s) for s in STOP_TOKENS)
    return RolloutRunner(ScriptedDoorsSampler(renderer, noise, seed), renderer, stops,
                         family.make_env, family.reward,
                         RolloutConfig(group_size=4, max_turns=40, max_turn_tokens=4,
                                       max_response_tokens=4000))


def _play(task: Task, actions: str) -> Trajectory:
    return Trajectory(task, [0], turns=[Turn([1], [0.0], a) for a in actions])


FAMILY = DoorsFamily(min_length=8, max_length=8)


@pytest.fixture(scope="module")
def mixed() -> Trajectory:
    """Right, filler and wrong presses at both easy and hard doors."""
    task = Task("t", (), metadata={"signs": "aAbB"})
    # a: opens a; .: waits at A; c: wrong at A (key b); b: opens A; b: opens b;
    # .: waits at B; a: wrong at B (key c); c: opens B
    return _play(task, "a.cbb.ac")


def test_inverted_flips_every_score(mixed):
    truth = SubgoalEvaluator(FAMILY.subgoal)
    inverted = InvertedEvaluator(truth)
    for k in range(len(mixed.turns)):
        assert inverted(mixed, k) == 1.0 - truth(mixed, k)
    assert inverted.name == "inverted(subgoal)"


def test_hard_inverted_is_right_on_easy_doors_and_inverted_on_hard_ones(mixed):
    truth = SubgoalEvaluator(FAMILY.subgoal)
    faulty = HardInvertedEvaluator(truth, FAMILY.hard)
    # doors: a (easy), A (hard: key b), b (easy), B (hard: key c)
    scores = [faulty(mixed, k) for k in range(len(mixed.turns))]
    assert [truth(mixed, k) for k in range(len(mixed.turns))] == [
        1.0, 0.5, 0.0, 1.0, 1.0, 0.5, 0.0, 1.0]
    assert scores == [1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 1.0, 0.0]


def test_abstentions_stay_abstentions():
    abstain = SubgoalEvaluator(lambda t, k: None)
    traj = _play(Task("t", (), metadata={"signs": "A"}), "b")
    assert InvertedEvaluator(abstain)(traj, 0) is None
    assert HardInvertedEvaluator(abstain, FAMILY.hard)(traj, 0) is None


def test_credit_fault_wraps_the_configured_evaluator():
    runner = _runner(FAMILY, 0.0)
    inverted = make_evaluator(CreditConfig(evaluator="subgoal", fault="inverted"), FAMILY, runner)
    assert isinstance(inverted, InvertedEvaluator)
    hard = make_evaluator(CreditConfig(evaluator="subgoal", fault="hard_inverted"), FAMILY,
                          runner)
    assert isinstance(hard, HardInvertedEvaluator)
    with pytest.raises(ValueError, match="set credit.evaluator"):
        CreditConfig(fault="inverted")
    with pytest.raises(ValueError, match="has no hard"):
        make_evaluator(CreditConfig(evaluator="subgoal", fault="hard_inverted"), MazeFamily(),
                       runner)


def test_against_the_ground_truth_value_each_evaluator_is_what_it_claims():
    """Spearman with the family's true turn advantages over random play (three score
    levels against a continuous value): the sub-goal check is calibrated, the inverted
    one anti-correlated, the hard-inverted one in between."""
    family = DoorsFamily(min_length=16, max_length=16, slack=6, error_rate=0.2)
    rng = random.Random(0)
    turns = []
    for task in family.tasks("train", 6, seed=0):
        signs = task.metadata["signs"]
        actions, opened = [], 0
        while opened < len(signs) and len(actions) - actions.count(FILLER) - opened <= 6:
            roll = rng.random()
            a = key_for(signs[opened]) if roll < 0.6 else FILLER if roll < 0.8 else \
                rng.choice([k for k in KEYS if k != key_for(signs[opened])])
            opened += a == key_for(signs[opened])
            actions.append(a)
        t = _play(task, "".join(actions))
        turns += [(t, k) for k in range(len(t.turns))]
    truth = SubgoalEvaluator(family.subgoal)
    gt = [family.advantage(t, k) for t, k in turns]

    def rho(evaluator) -> float:
        return spearman([evaluator(t, k) for t, k in turns], gt)

    assert rho(truth) > 0.85
    assert rho(InvertedEvaluator(truth)) < -0.85
    assert 0.0 < rho(HardInvertedEvaluator(truth, family.hard)) < 0.5


@pytest.mark.slow
def test_calibration_trusts_the_ground_truth_and_catches_the_hard_inverted_one():
    """Against Monte Carlo branches of a scripted policy (seeded; the verdicts of 16
    states x 6 branches are noisy, which docs/credit.md measures on the benchmark)."""
    runner = _runner(FAMILY, noise=0.3, seed=0)
    groups = runner.run(FAMILY.tasks("train", 4, seed=0))
    trajs = [t for g in groups for t in g.trajectories]
    reference = MonteCarloEvaluator(runner, samples=6)
    truth = SubgoalEvaluator(FAMILY.subgoal)
    verdicts = {}
    for evaluator in (truth, HardInvertedEvaluator(truth, FAMILY.hard)):
        states = sample_states(trajs, 16, random.Random(0), evaluator)
        verdicts[evaluator.name] = calibrate(evaluator, reference, states, min_spearman=0.3)
    assert verdicts["subgoal"].trusted, verdicts
    assert not verdicts["hard_inverted(subgoal)"].trusted, verdicts

"""A prompt reaches a real model's rollouts: SmolLM2-135M-Instruct does not call the
calculator from the family's instruction alone, and does with one demonstration in the
few-shot block (docs/optimize.md, docs/benchmarks.md)."""

from dataclasses import replace

import pytest

from tracerl.optimize import Budget, OptimizeConfig, Prompt
from tracerl.optimize.config import DataConfig, ModelConfig
from tracerl.optimize.run import Optimization
from tracerl.rollout.config import RolloutConfig
from tracerl.train.config import TaskConfig


@pytest.mark.slow
def test_a_demonstration_in_the_prompt_changes_what_smollm2_does(smollm2_dir):
    calc = replace(TaskConfig().calc, calls=1, skip_tool_prob=0.0)
    config = OptimizeConfig(
        model=ModelConfig(name="smollm2-135m"), dtype="auto", threads=1, progress=False,
        data=DataConfig(train_tasks=2, heldout_tasks=2, example_pool=1),
        rollout=RolloutConfig(group_size=1, max_turns=3, max_turn_tokens=40,
                              max_response_tokens=160, temperature=0.0),
        task=replace(TaskConfig(), calc=calc), budget=Budget(calls=40, tokens=40_000))
    search = Optimization(config).search
    (example,) = search.data.examples
    plain = search.score(Prompt(), operation="start")
    shown = search.score(Prompt(examples=(example,)), operation="example")
    assert plain.score == 0.0 and shown.score == 1.0
    assert shown.trajectories[0].turns[0].tool_results[0].ok
    assert search.ledger.spent.calls == plain.calls + shown.calls <= 40


@pytest.mark.slow
def test_on_sentiment_the_start_is_partial_and_demonstrations_move_it(smollm2_dir):
    """The benchmark's task (benchmarks/optimize.py): SmolLM2's score from the family's
    question alone is strictly between 0 and 1, and the few-shot block moves it."""
    config = OptimizeConfig(
        model=ModelConfig(name="smollm2-135m"), dtype="auto", threads=1, progress=False,
        trace=False, data=DataConfig(train_tasks=8, heldout_tasks=1, example_pool=3),
        rollout=RolloutConfig(group_size=1, max_turns=1, max_turn_tokens=6,
                              max_response_tokens=6, temperature=0.0),
        task=replace(TaskConfig(), family="sentiment"), budget=Budget(calls=40, tokens=20_000))
    search = Optimization(config).search
    start = search.score(Prompt(), operation="start")
    scores = {ids: search.score(Prompt(examples=ids), operation="examples").score
              for ids in ((e,) for e in search.data.examples)}
    assert 0.0 < start.score < 1.0
    assert max(scores.values()) > start.score and len(set(scores.values())) > 1
    assert search.ledger.spent.calls == 8 * (1 + len(scores))

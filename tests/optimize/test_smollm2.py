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
        model=ModelConfig(name="smollm2-135m"), dtype="bfloat16", threads=1, progress=False,
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

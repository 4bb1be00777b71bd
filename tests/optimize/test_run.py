"""optimize() end to end on the tiny policy (built locally, real sampling, real calc
env). The tiny policy is untrained, so these check the machinery: the budget, the
cache, the history, resume and bad input. tests/optimize/test_smollm2.py checks that a
prompt reaches a real model's rollouts and changes its score."""

import json
from dataclasses import replace

import pytest

from tracerl.optimize import Budget, OptimizeConfig, optimize, read_history
from tracerl.optimize.config import DataConfig, ModelConfig, TeacherConfig
from tracerl.optimize.optimizers import OPTIMIZERS
from tracerl.optimize.settings import SearchSettings
from tracerl.policy.tiny import TinySpec
from tracerl.rollout.config import RolloutConfig
from tracerl.train.config import TaskConfig

pytestmark = pytest.mark.slow


def tiny_config(**changes) -> OptimizeConfig:
    base = OptimizeConfig(
        model=ModelConfig(name="tiny"), teacher=TeacherConfig(max_tokens=12),
        tiny=TinySpec(hidden_size=64, layers=2, heads=2, intermediate_size=128),
        data=DataConfig(train_tasks=3, heldout_tasks=2, example_pool=3),
        rollout=RolloutConfig(group_size=1, max_turns=2, max_turn_tokens=8,
                              max_response_tokens=32, temperature=0.0),
        search=SearchSettings(minibatch=2, max_examples=1),
        task=replace(TaskConfig(), calc=replace(TaskConfig().calc, calls=1)),
        budget=Budget(calls=30, tokens=15_000), progress=False, threads=1)
    return replace(base, **changes)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_stops_inside_its_budget_and_accounts_every_call(name):
    result = optimize(config=tiny_config(), optimizer=name)
    assert result.spent.calls <= 30 and result.spent.tokens <= 15_000
    assert "budget exhausted" in result.stopped or "exhausted" in result.stopped
    history = result.history
    assert history[0].operation == "start" and history[0].full
    assert sum(e.calls for e in history) == result.spent.calls
    assert sum(e.tokens for e in history) == result.spent.tokens
    assert history[-1].spent_calls == result.spent.calls
    assert result.best_score is not None and result.heldout_score is not None


def test_the_tiny_teachers_replies_are_counted_skipped_candidates():
    cfg = tiny_config(budget=Budget(calls=60, tokens=30_000), heldout=False)
    result = optimize(config=cfg, optimizer="metaprompt")
    skipped = [e for e in result.history if e.status == "skipped"]
    assert result.skipped == len(skipped) > 0
    assert all("reply" in e.note for e in skipped)


def test_resume_replays_from_the_cache_and_continues(tmp_path):
    cfg = tiny_config(search=SearchSettings(minibatch=2, max_evaluations=5),
                      budget=Budget(calls=400, tokens=200_000))
    first = optimize(config=cfg, optimizer="gepa", run_dir=tmp_path / "run")
    assert len(first.history) == 5 and "5 evaluations" in first.stopped
    lines = (tmp_path / "run" / "history.jsonl").read_text().splitlines()
    longer = replace(cfg, search=replace(cfg.search, max_evaluations=9))
    second = optimize(config=longer, optimizer="gepa", run_dir=tmp_path / "run", resume=True)
    again = (tmp_path / "run" / "history.jsonl").read_text().splitlines()
    assert again[:5] == lines and len(again) == 9
    assert [e.prompt for e in second.history[:5]] == [e.prompt for e in first.history]
    history = read_history(tmp_path / "run" / "history.jsonl")
    assert sum(e.calls for e in history) == second.spent.calls
    assert sum(e.calls for e in history[:5]) == first.spent.calls


def test_a_shared_cache_makes_the_same_search_free(tmp_path):
    cfg = tiny_config(cache=str(tmp_path / "shared.sqlite"), heldout=False)
    first = optimize(config=cfg, optimizer="random_search")
    second = optimize(config=cfg, optimizer="random_search")
    assert first.spent.calls > 0 and second.spent.calls == 0
    assert [e.prompt for e in second.history] == [e.prompt for e in first.history]
    assert [e.score for e in second.history] == [e.score for e in first.history]


def test_a_per_turn_metric_is_an_objective():
    from tracerl.evals import TokenCount
    from tracerl.optimize import PerTurnMean

    cfg = tiny_config(search=SearchSettings(minibatch=2, max_evaluations=1), heldout=False)
    result = optimize(config=cfg, objective=PerTurnMean(TokenCount()), optimizer="gepa")
    (start,) = result.history
    assert start.score is not None and start.score > 0  # tokens of each turn's prefix


def _raises(trajectory):
    raise RuntimeError("judge is down")


def test_a_raising_objective_gives_unjudged_entries_not_a_crash(tmp_path):
    cfg = tiny_config(search=SearchSettings(minibatch=2, max_evaluations=3))
    result = optimize(config=cfg, objective=_raises, optimizer="random_search",
                      run_dir=tmp_path / "run")
    scored = [e for e in result.history if e.status != "skipped"]
    assert scored and all(e.status == "unjudged" and e.score is None for e in scored)
    assert "judge is down" in scored[0].note and scored[0].unjudged == 3
    assert result.best_score is None
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["entries"] == len(result.history)

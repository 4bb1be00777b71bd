"""`optimize(...)`: search for a better prompt on real rollouts, within a budget.

    from tracerl.optimize import optimize, Prompt
    result = optimize(Prompt(instruction="Use the calculator."), "calc",
                      optimizer="gepa", budget=Budget(calls=800, tokens=200_000))
    result.best_prompt, result.heldout_score, result.history

The pieces, in order: the task family (through the registry, as training builds it)
with the objective as its reward; the search data (tracerl.optimize.data); the task
model as a Sampler metered by the ledger and answered from the response cache; the
RolloutRunner from tracerl.train.runner.build_runner over that sampler (the runner
training uses); the teacher; then the optimizer's `run(search)` until the budget or
`search.max_evaluations` stops it. The starting prompt is scored first (entry 0). At
the end the starting and the best prompt are scored on the held-out tasks, with a
ledger of their own (reported apart, outside the budget).

With a run directory, everything is written as it happens: config.yaml,
history.jsonl, budget.json, cache.sqlite and traces.sqlite; at the end
best_prompt.txt (readable), best_prompt.json (the slots, to seed another run or SFT),
summary.json and score.png. `resume=True` continues a run in its directory
(tracerl.optimize.search explains how).
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch
import yaml
from transformers import AutoTokenizer

from tracerl.envs.family import FamilyWithReward, TaskFamily
from tracerl.optimize.budget import Budget, BudgetExhausted, Ledger, Spent
from tracerl.optimize.cache import ResponseCache
from tracerl.optimize.config import ModelConfig, OptimizeConfig, train_view
from tracerl.optimize.data import SearchData, family_data, jsonl_data
from tracerl.optimize.history import Evaluation, HistoryLog, best, read_history
from tracerl.optimize.models import (
    CompletionsSampler,
    EndpointTeacher,
    LocalTeacher,
    MeteredSampler,
    endpoint_client,
)
from tracerl.optimize.plot import plot_search
from tracerl.optimize.prompt import Prompt, apply_prompt, render_prompt
from tracerl.optimize.search import Search, SearchDone
from tracerl.optimize.teacher import Teacher
from tracerl.policy.model import Policy, load_policy, policy_from_model, write_tiny
from tracerl.policy.precision import weights_dtype
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import Sampler
from tracerl.policy.zoo import resolve_model
from tracerl.rewards.base import Reward
from tracerl.rewards.compose import as_reward
from tracerl.trace.tracer import Tracer
from tracerl.train.configlib import ConfigError, to_dict
from tracerl.train.progress import ProgressReporter
from tracerl.train.runner import build_runner, build_task_family
from tracerl.train.threads import choose_threads

UNLIMITED = Budget(calls=10**12, tokens=10**15)


class OptimizationInterrupted(Exception):
    """Ctrl-C during a search: the history and the spend are saved; the message says
    how to resume."""


@dataclass(frozen=True)
class OptimizeResult:
    best_prompt: Prompt
    best_score: float | None
    """The best prompt's score on the search tasks."""
    heldout_score: float | None
    """The best prompt's score on the held-out tasks (None when not measured)."""
    start_score: float | None
    start_heldout_score: float | None
    history: tuple[Evaluation, ...]
    spent: Spent
    budget: Budget
    stopped: str
    """Why the search stopped (budget, max_evaluations, exhausted space)."""
    skipped: int
    """Teacher proposals that were not usable prompts (counted, not scored)."""
    heldout_spent: Spent
    run_dir: Path | None = None

    def summary(self) -> dict[str, Any]:
        return {"best_score": self.best_score, "heldout_score": self.heldout_score,
                "start_score": self.start_score, "start_heldout_score": self.start_heldout_score,
                "best_prompt": self.best_prompt.to_dict(), "entries": len(self.history),
                "scored": sum(e.status == "scored" for e in self.history),
                "skipped": self.skipped, "stopped": self.stopped,
                "spent": asdict(self.spent), "budget": asdict(self.budget),
                "heldout_spent": asdict(self.heldout_spent),
                "run_dir": str(self.run_dir) if self.run_dir else None}


def _local_policy(model: ModelConfig, config: OptimizeConfig, scratch: Path) -> Policy:
    dtype = weights_dtype(config.dtype)
    if model.name == "tiny":
        path = write_tiny(scratch / "init", config.tiny, config.seed)
        return load_policy(path, config.device, dtype, name="tiny")
    return load_policy(model.name, config.device, dtype)


@dataclass
class _Models:
    policy: Policy
    """The task model's tokenizer and stops (and weights, when local)."""
    inner: Sampler
    """The task model's unmetered sampler."""
    model_id: str
    teacher: Callable[[ResponseCache, Ledger], Teacher]


def _models(config: OptimizeConfig, scratch: Path) -> _Models:
    task = config.model
    if task.url:
        tok = AutoTokenizer.from_pretrained(str(resolve_model(task.tokenizer)),
                                            local_files_only=True)
        policy = policy_from_model(None, tok, task.name)  # type: ignore[arg-type]
        client = endpoint_client(task.url, task.key_env)
        inner: Sampler = CompletionsSampler(client, task.name, tok)
        model_id = f"{task.url}#{task.name}"
    else:
        policy = _local_policy(task, config, scratch)
        inner = TransformersSampler(policy.model, policy.pad_id, seed=config.seed,
                                    tokenizer=policy.tokenizer)
        model_id = f"{task.name}@{config.dtype}"
    teacher_cfg = config.teacher if config.teacher.name else replace(
        config.teacher, name=task.name, url=task.url, key_env=task.key_env)
    if teacher_cfg.url:
        client = endpoint_client(teacher_cfg.url, teacher_cfg.key_env)
        return _Models(policy, inner, model_id,
                       lambda cache, ledger: EndpointTeacher(client, teacher_cfg.name,
                                                             cache, ledger))
    teacher_policy = policy if teacher_cfg.name == task.name and not task.url else \
        _local_policy(teacher_cfg, config, scratch)
    return _Models(policy, inner, model_id, lambda cache, ledger: LocalTeacher(
        teacher_policy, f"{teacher_cfg.name}@{config.dtype}", cache, ledger, config.seed))


def _data(config: OptimizeConfig, family: TaskFamily) -> SearchData:
    d = config.data
    if d.jsonl:
        return jsonl_data(d.jsonl, d.train_tasks, d.heldout_tasks, d.example_pool, config.seed)
    return family_data(family, d.train_tasks, d.heldout_tasks, d.example_pool, config.seed)


def start_prompt(config: OptimizeConfig) -> Prompt:
    p = config.prompt
    if p.file:
        try:
            data = yaml.safe_load(Path(p.file).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"prompt.file: cannot read {p.file}: {e}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"prompt.file: {p.file} must hold a mapping of slots")
        return Prompt.from_dict(data.get("prompt", data) if "prompt" in data else data)
    return Prompt(p.system, p.prefix, p.instruction, tuple(p.examples))


class Optimization:
    """One search (see the module docstring); `run()` returns the OptimizeResult."""

    def __init__(self, config: OptimizeConfig, *, run_dir: Path | None = None,
                 objective: Reward | Callable[..., Any] | None = None,
                 family: TaskFamily | None = None, resume: bool = False) -> None:
        self.config, self.run_dir = config, run_dir
        choice = choose_threads(config.threads)
        torch.set_num_threads(choice.threads)
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        self._scratch = tempfile.TemporaryDirectory(prefix="tracerl-optimize-")
        view = train_view(config)
        family = family if family is not None else build_task_family(view)
        if objective is not None:
            family = FamilyWithReward(family, as_reward(objective))
        self.family = family
        self.data = _data(config, family)
        self.start = start_prompt(config)
        for ex in self.start.examples:
            if ex not in self.data.examples:
                raise ConfigError(f"prompt.examples: {ex!r} is not in the example pool "
                                  f"({sorted(self.data.examples)[:4]}...)")
        if run_dir is not None:
            run_dir.mkdir(parents=True, exist_ok=True)
            if not resume and (run_dir / "history.jsonl").exists():
                raise ConfigError(f"{run_dir} already holds a search; resume it or pick "
                                  "another name")
            (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(config),
                                                                sort_keys=False))
        cache_path = Path(config.cache) if config.cache else (
            run_dir / "cache.sqlite" if run_dir is not None else None)
        self.cache = ResponseCache(cache_path)
        self.ledger = Ledger(config.budget, run_dir / "budget.json" if run_dir else None)
        self.heldout_ledger = Ledger(UNLIMITED)
        models = _models(config, Path(run_dir or self._scratch.name))
        self.policy = models.policy
        self.runner = build_runner(view, models.policy, family, MeteredSampler(
            models.inner, models.model_id, self.cache, self.ledger))
        self.heldout_runner = build_runner(view, models.policy, family, MeteredSampler(
            models.inner, models.model_id, self.cache, self.heldout_ledger))
        self.teacher = models.teacher(self.cache, self.ledger)
        prior = read_history(run_dir / "history.jsonl") if run_dir and resume else []
        self.tracer = Tracer.for_run(run_dir) if run_dir is not None and config.trace else None
        self.search = Search(self.data, self.start, self.runner, self.teacher,
                             config.teacher.settings(), self.ledger, config.search,
                             config.seed, config.rollout,
                             HistoryLog(run_dir / "history.jsonl" if run_dir else None),
                             prior, self._on_entry)
        self._progress: Any = None

    def score_heldout(self, prompt: Prompt) -> float | None:
        """The mean objective of `prompt` on the held-out tasks (judged rollouts only),
        on the held-out ledger (outside the budget)."""
        tasks = [apply_prompt(prompt, t, self.data.examples) for t in self.data.heldout]
        groups = self.heldout_runner.run(tasks, group_size=self.config.rollout.group_size,
                                         temperature=self.config.rollout.temperature)
        judged = [t.outcome_reward for g in groups for t in g.trajectories
                  if t.outcome_reward is not None]
        return sum(judged) / len(judged) if judged else None

    def _on_entry(self, entry: Evaluation) -> None:
        if self.tracer is not None:
            for traj in entry.trajectories:
                self.tracer.record_trajectory(traj, run=self.config.name, step=entry.index,
                                              model_name=self.policy.name)
        if self._progress is not None:
            top = best(self.search.history)
            shown = "-" if top is None or top.score is None else f"{top.score:.3f}"
            self._progress.update(entry.spent_calls, f"best {shown}  entries {entry.index + 1}"
                                  f"  tokens {entry.spent_tokens}/{self.config.budget.tokens}")

    def run(self) -> OptimizeResult:
        cfg = self.config
        optimizer = cfg.optimizer_settings()
        stopped = "finished"
        with ProgressReporter(cfg.progress, cfg.progress_every_s) as progress:
            self._progress = progress.stage(f"optimize {cfg.optimizer}", cfg.budget.calls,
                                            self.ledger.spent.calls)
            try:
                self.search.score(self.start, operation="start")
                optimizer.run(self.search)  # type: ignore[attr-defined]
            except BudgetExhausted as e:
                stopped = str(e)
                self.search.abort(stopped)
            except SearchDone as e:
                stopped = str(e)
            except KeyboardInterrupt:
                self.search.abort("interrupted")
                self._close()
                raise OptimizationInterrupted(
                    f"interrupted after {len(self.search.history)} entries; history and spend "
                    f"are saved. Resume with: tracerl optimize --resume {self.run_dir}") from None
            self._progress.done()
            self._progress = None
            result = self._finish(stopped, progress)
        self._close()
        return result

    def _finish(self, stopped: str, progress: ProgressReporter) -> OptimizeResult:
        history = tuple(self.search.history)
        top = best(list(history))
        start = history[0] if history and history[0].operation == "start" else None
        prompt = top.prompt if top is not None else self.start
        held, start_held = None, None
        if self.config.heldout:
            progress.note(f"held-out: scoring the starting and the best prompt on "
                          f"{len(self.data.heldout)} tasks")
            start_held = self.score_heldout(self.start)
            held = start_held if prompt == self.start else self.score_heldout(prompt)
        result = OptimizeResult(
            best_prompt=prompt, best_score=top.score if top else None, heldout_score=held,
            start_score=start.score if start else None, start_heldout_score=start_held,
            history=history, spent=self.ledger.spent, budget=self.config.budget,
            stopped=stopped, skipped=sum(e.status == "skipped" for e in history),
            heldout_spent=self.heldout_ledger.spent, run_dir=self.run_dir)
        if self.run_dir is not None:
            self._write(result)
        return result

    def _write(self, result: OptimizeResult) -> None:
        d = self.run_dir
        assert d is not None
        (d / "best_prompt.txt").write_text(render_prompt(result.best_prompt, self.data.examples))
        (d / "best_prompt.json").write_text(json.dumps(result.best_prompt.to_dict(), indent=2))
        (d / "summary.json").write_text(json.dumps(result.summary(), indent=2))
        plot_search(result.history, d / "score.png",
                    f"{self.config.optimizer} on {self.family.name}: objective vs budget")

    def _close(self) -> None:
        if self.tracer is not None:
            self.tracer.close()
            self.tracer = None
        self.cache.close()
        self._scratch.cleanup()


def optimize(prompt: Prompt | str | Mapping[str, Any] | None = None,
             data: TaskFamily | str | Path | None = None,
             objective: Reward | Callable[..., Any] | None = None,
             optimizer: str | None = None, budget: Budget | None = None, *,
             config: OptimizeConfig | None = None, run_dir: str | Path | None = None,
             resume: bool = False) -> OptimizeResult:
    """Search for a better prompt (module docstring).

    `prompt`: a Prompt, a string (the instruction slot) or a mapping of slots; `data`: a
    TaskFamily, a registered family name, or a JSONL path of tasks (for the family in
    `config.task`); `objective`: any Reward (`tracerl.evals.as_reward(metric)` for an
    evaluate() metric; None = the family's reward); `optimizer`: a name of
    tracerl.optimize.OPTIMIZERS; `budget`: calls and tokens. `config` holds everything
    else (models, rollout, search knobs); the arguments given override it.
    """
    cfg = config or OptimizeConfig()
    if isinstance(prompt, str):
        prompt = Prompt(instruction=prompt)
    elif isinstance(prompt, Mapping):
        prompt = Prompt.from_dict(prompt)
    if prompt is not None:
        cfg = replace(cfg, prompt=replace(cfg.prompt, file="", **{
            k: v for k, v in prompt.to_dict().items() if k != "examples"},
            examples=list(prompt.examples)))
    family = data if data is not None and not isinstance(data, (str, Path)) else None
    if isinstance(data, Path) or (isinstance(data, str) and data.endswith(".jsonl")):
        cfg = replace(cfg, data=replace(cfg.data, jsonl=str(data)))
    elif isinstance(data, str):
        cfg = replace(cfg, task=replace(cfg.task, family=data))  # type: ignore[type-var]
    if optimizer is not None:
        cfg = replace(cfg, optimizer=optimizer)  # type: ignore[arg-type]
    if budget is not None:
        cfg = replace(cfg, budget=budget)
    return Optimization(cfg, run_dir=Path(run_dir) if run_dir else None, objective=objective,
                        family=family, resume=resume).run()

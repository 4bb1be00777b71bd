"""Prompt optimizers at equal budget on a task where the prompt matters for a 135M model.

The task: `calc` with one calculator call (`task.calc.calls=1`), the task model
SmolLM2-135M-Instruct (offline, `smollm2-135m`), greedy scoring. Why this task: the
135M model, told in words to use the calculator and answer "Answer: N" (the family's
own instruction, always in the task), writes Python instead and scores 0; shown one
demonstration of a calculator call it solves every task (tests/optimize/test_smollm2.py).
So the prompt decides everything, and what decides it is tool-call discipline and the
choice of few-shot example: half of the example pool (`skip_tool_prob=0.5`) are
demonstrations that answer without the tool, which teach the model to guess.

Every optimizer gets the same starting prompt (empty slots: the family's instruction
only), the same search and held-out tasks per seed, the same teacher (SmolLM2 itself:
offline, and small), and the same budget in model calls and tokens; each run has its
own response cache, so none is paid by another's calls. The held-out score is the mean
reward of the best prompt on held-out tasks, against the starting prompt's.

`--gepa-package` adds the `gepa` package (pip install gepa; no dependencies, so it may
live in another venv: put its site-packages on PYTHONPATH) driven through the same
metered runner, teacher and budget (its adapter scores through our Search, so its
calls and tokens are counted the same way).

    python benchmarks/optimize.py [--seeds 0 1 2] [--jobs 3] [--budget-calls 60]
        [--budget-tokens 60000] [--train 4] [--heldout 12] [--gepa-package] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

OPTIMIZERS = ("gepa", "random_search", "promptwizard", "bayesian", "protegi", "metaprompt")


def config(args: argparse.Namespace, seed: int, optimizer: str, cache: Path) -> Any:
    from tracerl.optimize import Budget, OptimizeConfig
    from tracerl.optimize.config import DataConfig, ModelConfig, TeacherConfig
    from tracerl.optimize.settings import SearchSettings
    from tracerl.rollout.config import RolloutConfig
    from tracerl.train.config import TaskConfig

    calc = replace(TaskConfig().calc, calls=1, skip_tool_prob=0.5)
    return OptimizeConfig(
        name=f"{optimizer}-{seed}", seed=seed, optimizer=optimizer if optimizer in OPTIMIZERS
        else "gepa", model=ModelConfig(name=args.model), dtype=args.dtype, threads=1,
        teacher=TeacherConfig(max_tokens=args.teacher_tokens), progress=False, trace=False,
        heldout=False, cache=str(cache),
        data=DataConfig(train_tasks=args.train, heldout_tasks=args.heldout, example_pool=6),
        rollout=RolloutConfig(group_size=1, max_turns=3, max_turn_tokens=40,
                              max_response_tokens=160, temperature=0.0),
        search=SearchSettings(minibatch=2, max_examples=1, slots=["system", "instruction"],
                              feedback_examples=2),
        task=replace(TaskConfig(), calc=calc),
        budget=Budget(calls=args.budget_calls, tokens=args.budget_tokens))


def gepa_package(optimization: Any, budget_calls: int) -> None:
    """The `gepa` package's optimize() over the instruction slot, scored through our
    Search (metered runner, same cache and ledger) with our teacher as reflection LM."""
    import gepa
    from gepa.core.adapter import EvaluationBatch

    from tracerl.optimize.budget import BudgetExhausted
    from tracerl.optimize.feedback import trace_text
    from tracerl.optimize.prompt import Prompt
    from tracerl.types import Message

    search = optimization.search
    tasks = list(search.data.train)

    class Adapter:
        propose_new_texts = None

        def evaluate(self, batch, candidate, capture_traces=False):
            prompt = Prompt(system=candidate["system"], instruction=candidate["instruction"])
            entry = search.score(prompt, batch, operation="gepa-package")
            by_task = {t.task.id: t for t in entry.trajectories}
            scores = [entry.task_scores.get(t.id) or 0.0 for t in batch]
            trajs = [by_task[t.id] for t in batch]
            return EvaluationBatch(outputs=trajs, scores=scores,
                                   trajectories=trajs if capture_traces else None)

        def make_reflective_dataset(self, candidate, eval_batch, components):
            rows = [{"Inputs": t.task.messages[-1].content, "Generated Outputs": trace_text(t),
                     "Feedback": f"score {s:.2f}; expected answer {t.task.answer}"}
                    for t, s in zip(eval_batch.trajectories, eval_batch.scores, strict=True)]
            return {c: rows for c in components}

    def reflection_lm(prompt: str) -> str:
        return search.ask([Message("user", prompt)])

    def out_of_budget(state: Any) -> bool:  # room for one more full scoring?
        return not search.ledger.fits(2 * len(tasks) + 1, 2000 * len(tasks))

    search.score(search.start, operation="start")
    try:
        gepa.optimize(seed_candidate={"system": "", "instruction": ""}, trainset=tasks,
                      valset=tasks, adapter=Adapter(), reflection_lm=reflection_lm,
                      reflection_minibatch_size=2, max_metric_calls=budget_calls * 10,
                      stop_callbacks=out_of_budget, seed=search.rng.randrange(2**31),
                      skip_perfect_score=False)
    except BudgetExhausted:
        pass  # the ledger stopped it mid-iteration: the scorings so far stand


def one_seed(args: argparse.Namespace, seed: int) -> list[dict[str, Any]]:
    import torch

    from tracerl.optimize.run import Optimization

    torch.set_num_threads(1)
    out = Path(args.out)
    rows = []
    held = Optimization(config(args, seed, "random_search", out / f"heldout-{seed}.sqlite"))
    start_held = held.score_heldout(held.start)
    names = list(args.optimizers)
    if args.gepa_package:  # right after ours, so the pair is measured first
        names.insert(names.index("gepa") + 1 if "gepa" in names else 0, "gepa_package")
    for name in names:
        t0 = time.time()
        run = Optimization(config(args, seed, name, out / f"{name}-{seed}.sqlite"))
        if name == "gepa_package":
            gepa_package(run, args.budget_calls)
            top = run.search.best()
            result_prompt, spent = (top.prompt if top else run.start), run.ledger.spent
            best_score, entries = (top.score if top else None), len(run.search.history)
            skipped = sum(e.status == "skipped" for e in run.search.history)
        else:
            result = run.run()
            result_prompt, spent, best_score = result.best_prompt, result.spent, result.best_score
            entries, skipped = len(result.history), result.skipped
        row = {"optimizer": name, "seed": seed, "start_heldout": start_held,
               "best_heldout": held.score_heldout(result_prompt), "best_search": best_score,
               "calls": spent.calls, "tokens": spent.tokens, "entries": entries,
               "skipped": skipped, "seconds": round(time.time() - t0, 1),
               "prompt": result_prompt.to_dict()}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def _fmt(values: list[float]) -> str:
    if not values:
        return "-"
    mean = statistics.fmean(values)
    spread = statistics.pstdev(values) if len(values) > 1 else 0.0
    return f"{mean:.3f} ± {spread:.3f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS), choices=OPTIMIZERS)
    p.add_argument("--gepa-package", action="store_true")
    p.add_argument("--budget-calls", type=int, default=60)
    p.add_argument("--budget-tokens", type=int, default=60_000)
    p.add_argument("--train", type=int, default=4)
    p.add_argument("--heldout", type=int, default=12)
    p.add_argument("--teacher-tokens", type=int, default=60)
    p.add_argument("--model", default="smollm2-135m", help="task model and teacher")
    p.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16"))
    p.add_argument("--jobs", type=int, default=1, help="seeds run in parallel processes")
    p.add_argument("--out", default="/tmp/tracerl-bench-optimize")
    args = p.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for f in Path(args.out).glob("*.sqlite"):
        f.unlink()  # every run pays for its own calls
    started = time.time()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        rows = [r for rs in pool.map(one_seed, [args] * len(args.seeds), args.seeds) for r in rs]
    (Path(args.out) / "results.json").write_text(json.dumps(rows, indent=2))
    print(f"\nheld-out mean reward over seeds {args.seeds} (mean ± std), budget "
          f"{args.budget_calls} calls / {args.budget_tokens} tokens, {args.train} search and "
          f"{args.heldout} held-out tasks per seed; {time.time() - started:.0f} s in all")
    print(f"{'optimizer':<14} {'start':>15} {'best prompt':>15} {'search score':>15} "
          f"{'calls':>7} {'tokens':>8} {'skipped':>8}")
    for name in dict.fromkeys(r["optimizer"] for r in rows):
        mine = [r for r in rows if r["optimizer"] == name]
        print(f"{name:<14} {_fmt([r['start_heldout'] or 0.0 for r in mine]):>15} "
              f"{_fmt([r['best_heldout'] or 0.0 for r in mine]):>15} "
              f"{_fmt([r['best_search'] or 0.0 for r in mine]):>15} "
              f"{statistics.fmean(r['calls'] for r in mine):>7.0f} "
              f"{statistics.fmean(r['tokens'] for r in mine):>8.0f} "
              f"{statistics.fmean(r['skipped'] for r in mine):>8.1f}")


if __name__ == "__main__":
    main()

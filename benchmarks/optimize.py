"""Prompt optimizers at equal budget on a task where the prompt matters for a 135M model.

The task: `sentiment` (tracerl.envs.sentiment), one-word labels of one-sentence
reviews, exact match; the task model and the teacher are SmolLM2-135M-Instruct
(offline, `smollm2-135m`, bfloat16), greedy scoring, replies of at most 6 tokens. Why
this task: the starting prompt (the family's own question) scores about 0.4, because
the 135M model mostly answers "positive" and sometimes in a sentence; one or two
demonstrations in the few-shot block take it anywhere from 0.46 to 0.96 depending on
which ones, and a bad instruction takes it to about 0 (`--hand` prints these
hand-written prompts' scores in the same run). One scoring of 12 tasks costs a few
seconds, so a budget of ~100 calls is minutes, not hours.

Every optimizer gets the same starting prompt (empty slots: the family's question
only), the same search, example-pool and held-out tasks per seed, the same teacher
(SmolLM2 itself) and the same budget in model calls and tokens; each run has its own
response cache, so none is paid by another's calls. The held-out score is the mean
reward of the best prompt on held-out tasks, against the starting prompt's.

`--gepa-package` adds the `gepa` package (pip install gepa; no dependencies, so it may
live in another venv: put its site-packages on PYTHONPATH) driven through the same
metered runner, teacher and budget (its adapter scores through our Search, so its
calls and tokens are counted the same way).

`--agent-opt PYTHON` adds agent-opt's Bayesian search and GEPA, run by
benchmarks/optimize_agentopt.py under agent-opt's own interpreter, against `tracerl
serve` (started here on a free port of 127.0.0.1, the same SmolLM2 in bfloat16) through
LiteLLM's OpenAI-compatible route; that driver counts their calls and tokens as our
ledger does (one request = one call; prompt plus completion tokens) and stops them at
the same budget in calls.

    python benchmarks/optimize.py [--seeds 0 1 2] [--jobs 2] [--budget-calls 96]
        [--budget-tokens 60000] [--train 12] [--heldout 24] [--gepa-package]
        [--agent-opt /path/to/agentopt-venv/bin/python] [--hand] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
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

    return OptimizeConfig(
        name=f"{optimizer}-{seed}", seed=seed, optimizer=optimizer if optimizer in OPTIMIZERS
        else "gepa", model=ModelConfig(name=args.model), dtype=args.dtype, threads=1,
        teacher=TeacherConfig(max_tokens=args.teacher_tokens), progress=False, trace=False,
        heldout=False, cache=str(cache),
        data=DataConfig(train_tasks=args.train, heldout_tasks=args.heldout,
                        example_pool=args.pool),
        rollout=RolloutConfig(group_size=1, max_turns=1, max_turn_tokens=args.task_tokens,
                              max_response_tokens=args.task_tokens, temperature=0.0),
        search=SearchSettings(minibatch=4, max_examples=args.max_examples,
                              slots=["system", "instruction"], feedback_examples=2),
        task=replace(TaskConfig(), family="sentiment"),
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
        return not search.ledger.fits(len(tasks) + 1, 400 * (len(tasks) + 1))

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
    if args.hand and seed == args.seeds[0]:
        rows += hand_prompts(held, seed)
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


def hand_prompts(held: Any, seed: int) -> list[dict[str, Any]]:
    """Hand-written prompts' held-out scores: how far the prompt moves this model."""
    from tracerl.optimize.prompt import Prompt

    pool = list(held.data.examples)
    labels = [held.data.examples[e][-1].content for e in pool]
    pos, neg = pool[labels.index("positive")], pool[labels.index("negative")]
    prompts = {
        "bad: prefix 'Review:'": Prompt(prefix="Review:"),
        "plain (start)": Prompt(),
        "system: one word": Prompt(system="Reply with the label only, one word."),
        "1 shot (positive)": Prompt(examples=(pos,)),
        "1 shot (negative)": Prompt(examples=(neg,)),
        "2 shots (neg, pos)": Prompt(examples=(neg, pos)),
        "2 shots (pos, neg)": Prompt(examples=(pos, neg)),
        "3 shots (pool order)": Prompt(examples=tuple(pool[:3])),
    }
    rows = []
    for name, prompt in prompts.items():
        row = {"hand": name, "seed": seed, "heldout": held.score_heldout(prompt),
               "prompt": prompt.to_dict()}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def agent_opt_run(args: argparse.Namespace, url: str, served: str, seed: int,
                  name: str) -> dict[str, Any] | None:
    """One agent-opt search (benchmarks/optimize_agentopt.py under agent-opt's own
    interpreter) through the local endpoint; its replies scored with the family's reward.
    agent-opt's Bayesian search draws its few-shot examples from the data it scores on:
    our search tasks (the held-out tasks stay unseen, as for ours)."""
    from tracerl.envs.sentiment import SentimentFamily, normalize_label
    from tracerl.optimize.data import family_data

    data = family_data(SentimentFamily(), args.train, args.heldout, args.pool, seed)
    job = {"url": url, "served": served, "optimizer": name, "seed": seed,
           "budget_calls": args.budget_calls, "task_tokens": args.task_tokens,
           "teacher_tokens": args.teacher_tokens, "max_examples": args.max_examples,
           "train": [{"question": t.messages[-1].content, "answer": t.answer}
                     for t in data.train],
           "heldout": [{"question": t.messages[-1].content, "answer": t.answer}
                       for t in data.heldout]}
    path = Path(args.out) / f"agentopt-{name}-{seed}.json"
    path.write_text(json.dumps(job))
    t0 = time.time()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([args.agent_opt, str(Path(__file__).with_name(
        "optimize_agentopt.py")), str(path)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        print(f"agent-opt {name} seed {seed} failed:\n{done.stderr[-3000:]}", flush=True)
        return None
    out = json.loads(done.stdout.strip().splitlines()[-1])
    gold = [t.answer for t in data.heldout]

    def score(replies: list[str]) -> float:
        return statistics.fmean(float(normalize_label(r or "") == g)
                                for r, g in zip(replies, gold, strict=True))

    row = {"optimizer": f"agent_opt_{name}", "seed": seed,
           "start_heldout": score(out["replies"]["start"]),
           "best_heldout": score(out["replies"]["best"]), "best_search": out["best_score"],
           "calls": out["spent"]["calls"], "tokens": out["spent"]["tokens"],
           "entries": out["entries"], "skipped": 0, "seconds": round(time.time() - t0, 1),
           "prompt": {"template": out["best"]}, "stopped": out["stopped"]}
    print(json.dumps(row), flush=True)
    return row


def agent_opt(args: argparse.Namespace, url: str, served: str) -> list[dict[str, Any]]:
    """Every (seed, optimizer) of agent-opt at once: each search is sequential by its
    design, and the server batches the concurrent requests of all of them."""
    runs = [(seed, name) for seed in args.seeds for name in args.agent_opt_optimizers]
    with ThreadPoolExecutor(len(runs)) as pool:
        rows = pool.map(lambda r: agent_opt_run(args, url, served, *r), runs)
        return [r for r in rows if r is not None]


class Server:
    """`tracerl serve MODEL` on a free port of 127.0.0.1, for agent-opt."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.port, self.name = _free_port(), "bench-model"
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tracerl.cli", "serve", args.model, f"dtype={args.dtype}",
             "threads=1", "--port", str(self.port), "--name", self.name,
             "--max-tokens", str(args.teacher_tokens)], env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{self.port}/v1"
        for _ in range(600):
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=2)
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"tracerl serve exited: {self.proc.stderr.read()}"
                                       ) from None
                time.sleep(0.5)
        raise RuntimeError("tracerl serve did not come up in 300 s")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


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
    p.add_argument("--agent-opt", metavar="PYTHON", help="agent-opt's interpreter (its venv)")
    p.add_argument("--agent-opt-optimizers", nargs="+", default=["bayesian", "gepa"],
                   choices=["bayesian", "gepa"])
    p.add_argument("--peers-only", action="store_true",
                   help="run agent-opt alone (not ours, not the gepa package)")
    p.add_argument("--hand", action="store_true", help="also score hand-written prompts")
    p.add_argument("--budget-calls", type=int, default=96)
    p.add_argument("--budget-tokens", type=int, default=60_000)
    p.add_argument("--train", type=int, default=12)
    p.add_argument("--heldout", type=int, default=24)
    p.add_argument("--pool", type=int, default=8, help="few-shot example pool")
    p.add_argument("--max-examples", type=int, default=3)
    p.add_argument("--task-tokens", type=int, default=6)
    p.add_argument("--teacher-tokens", type=int, default=48)
    p.add_argument("--model", default="smollm2-135m", help="task model and teacher")
    p.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16"))
    p.add_argument("--jobs", type=int, default=2, help="seeds run in parallel processes")
    p.add_argument("--out", default="/tmp/tracerl-bench-optimize")
    args = p.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for f in Path(args.out).glob("*.sqlite"):
        f.unlink()  # every run pays for its own calls
    started = time.time()
    theirs: list[dict[str, Any]] = []
    server = Server(args) if args.agent_opt else None
    thread = threading.Thread(target=lambda: theirs.extend(
        agent_opt(args, server.url, server.name))) if server else None
    try:
        if thread:
            thread.start()
        # spawn: a fork would copy the agent-opt thread's locks into the workers
        rows = []
        with ProcessPoolExecutor(max_workers=args.jobs,
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            if not args.peers_only:
                rows = [r for rs in pool.map(one_seed, [args] * len(args.seeds), args.seeds)
                        for r in rs]
        if thread:
            thread.join()
    finally:
        if server:
            server.close()
    rows += theirs
    (Path(args.out) / "results.json").write_text(json.dumps(rows, indent=2))
    for r in (r for r in rows if "hand" in r):
        print(f"hand prompt {r['hand']:<24} held-out {r['heldout']:.3f}")
    rows = [r for r in rows if "hand" not in r]
    print(f"\nheld-out mean reward over seeds {args.seeds} (mean ± std), budget "
          f"{args.budget_calls} calls / {args.budget_tokens} tokens, {args.train} search and "
          f"{args.heldout} held-out tasks per seed; {time.time() - started:.0f} s in all")
    print(f"{'optimizer':<14} {'start':>15} {'best prompt':>15} {'search score':>15} "
          f"{'calls':>7} {'tokens':>8} {'skipped':>8} {'s/run':>7}")
    for name in dict.fromkeys(r["optimizer"] for r in rows):
        mine = [r for r in rows if r["optimizer"] == name]
        print(f"{name:<14} {_fmt([r['start_heldout'] or 0.0 for r in mine]):>15} "
              f"{_fmt([r['best_heldout'] or 0.0 for r in mine]):>15} "
              f"{_fmt([r['best_search'] or 0.0 for r in mine]):>15} "
              f"{statistics.fmean(r['calls'] for r in mine):>7.0f} "
              f"{statistics.fmean(r['tokens'] for r in mine):>8.0f} "
              f"{statistics.fmean(r['skipped'] for r in mine):>8.1f}"
              f"{statistics.fmean(r['seconds'] for r in mine):>8.0f}")


if __name__ == "__main__":
    main()

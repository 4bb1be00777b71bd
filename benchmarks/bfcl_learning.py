"""The BFCL learning result: zero-shot, after SFT and after GRPO on held-out BFCL ids.

Runs `tracerl train` with the recipe below (plus any key=value given) once per seed, each
a fresh process, and scores the held-out ids of the chosen categories by BFCL's rules at
temperature 0: after SFT (the trainer's evaluation before RL) and after RL (its last),
read back per task from the run's trace store. `--zero-shot` also scores the untrained
model on the same ids with the same episode limits (`tracerl eval MODEL --family bfcl`).

    python benchmarks/bfcl_learning.py --seeds 0 1 2 --zero-shot [key=value ...]
    python benchmarks/bfcl_learning.py --seeds 0 1 2 --from-sft EARLIER_OUT [key=value ...]
    python benchmarks/bfcl_learning.py --seeds 0 1 2 --parallel rl.steps=14 rl.temperature=0.7
        --rl-categories simple_python multiple          (one line: the best recipe so far)

With `--rl-categories` each seed is two processes: SFT on every category, then RL from
its saved base on the named categories only (docs/bfcl.md).

Per seed: BFCL's Non-Live AST summary (the unweighted mean of the four categories'
accuracies), the mean over tasks, per-category accuracies, the whole process's wall time
(model load, SFT, both evaluations, RL) and its peak RSS (wait4). Over seeds: means,
the spread, and the RL-over-SFT gain with two 95% intervals: Student's t over the seeds'
paired gains, and a bootstrap over held-out tasks (resampled within each category, the
same resample for every seed). Per seed too, the two habits GRPO has been seen to change
(docs/benchmarks.md, BFCL attempts five to eight), counted in the held-out episodes after
SFT and after RL from the traces: episodes that make one call twice (same function, same
arguments), and episodes cut by a limit rather than ended by the policy. The data is BFCL
v4's, from the bfcl-eval wheel.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from tracerl.train.rl_config import RLConfig

AST = ("simple_python", "multiple", "parallel", "parallel_multiple")
LIMITS = ["rl.max_turns=9", "rl.max_turn_tokens=160", "rl.max_response_tokens=1024"]
"""Episode limits, the same for training and every evaluation: one call per action (the
longest accepted answer of these categories has 8 calls), then the closing answer."""
RECIPE = [
    "model=smollm2-135m", "task.family=bfcl", f"task.bfcl.categories=[{','.join(AST)}]",
    "stages=[sft,rl]", *LIMITS, "eval.temperature=0", "sft.demos=96", "sft.batch_size=8",
    "sft.epochs=1",
]
"""What every seed runs; the model's preset (LoRA r16, dtype=auto) fills in the rest and
key=value arguments override both. The SFT is BFCL's own, as measured (96 demonstrations
in batches of 8, one epoch), not the calc-tuned preset's."""
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}


def category_of(task_id: str) -> str:
    """BFCL ids are `<category>_<n>` (simple_python_12, parallel_multiple_3)."""
    return task_id.rsplit("_", 1)[0]


def non_live_ast(scores: dict[str, float]) -> float:
    """BFCL's Non-Live AST summary: the unweighted mean of the category accuracies (%)."""
    by_category: dict[str, list[float]] = defaultdict(list)
    for task_id, score in scores.items():
        by_category[category_of(task_id)].append(score)
    return 100 * statistics.mean(statistics.mean(v) for v in by_category.values())


def per_category(scores: dict[str, float]) -> dict[str, float]:
    by_category: dict[str, list[float]] = defaultdict(list)
    for task_id, score in scores.items():
        by_category[category_of(task_id)].append(score)
    return {c: 100 * statistics.mean(v) for c, v in sorted(by_category.items())}


@dataclass(frozen=True)
class SeedRun:
    seed: int
    after_sft: dict[str, float]
    """Task id -> 1.0 if BFCL's rules accept the episode, else 0.0 (unjudged counts 0)."""
    after_rl: dict[str, float]
    wall_s: float
    rl_s: float
    """From the end of the evaluation after SFT to the end of the process."""
    cpu_s: float
    """User + system CPU time of the process (and its children)."""
    peak_rss_gb: float
    habits: tuple[Habits, Habits]
    """After SFT, after RL."""


def eval_scores(run_dir: Path, name: str) -> tuple[dict[str, float], dict[str, float]]:
    """The first (after SFT) and last (after RL) held-out evaluation, per task: 1.0 where
    the reward was a success (BFCL accepted; `task.bfcl.reward=partial` pays less than
    1.0 for anything else), else 0.0."""
    from tracerl.trace.store import TraceStore
    from tracerl.train.evaluate import SUCCESS_THRESHOLD

    with TraceStore(run_dir) as store:
        rows = store.trajectories(run=f"{name}:eval")
    steps: dict[int, dict[str, float]] = defaultdict(dict)
    for r in rows:
        steps[r.step][r.task_id] = float((r.reward or 0.0) >= SUCCESS_THRESHOLD)
    if len(steps) < 2:
        raise SystemExit(f"{run_dir}: expected evaluations before and after RL, got steps "
                         f"{sorted(steps)}")
    return steps[min(steps)], steps[max(steps)]


@dataclass(frozen=True)
class Habits:
    """Held-out episodes of one evaluation that repeat a call, and that were cut."""

    repeats: int
    cut: int


def eval_habits(run_dir: Path, name: str) -> tuple[Habits, Habits]:
    """The first (after SFT) and last (after RL) held-out evaluation's habits, from the
    TOOL spans (function name, arguments) and the status of each episode."""
    from tracerl.trace.store import TraceStore

    by_step: dict[int, list[tuple[bool, bool]]] = defaultdict(list)
    with TraceStore(run_dir) as store:
        for r in store.trajectories(run=f"{name}:eval"):
            calls = [(s.name, s.attributes.get("input.value")) for s in store.spans(r.trace_id)
                     if s.attributes.get("openinference.span.kind") == "TOOL"]
            by_step[r.step].append((len(calls) != len(set(calls)), r.status != "done"))

    def habits(episodes: list[tuple[bool, bool]]) -> Habits:
        return Habits(sum(rep for rep, _ in episodes), sum(cut for _, cut in episodes))

    return habits(by_step[min(by_step)]), habits(by_step[max(by_step)])


def recipe(seed: int, from_sft: Path | None) -> list[str]:
    """The run's config: RECIPE, or with `from_sft` (a directory of an earlier run of
    this script) RL only, from that seed's SFT: its config, its base after SFT."""
    if from_sft is None:
        return RECIPE
    run = from_sft / f"seed{seed}"
    base = run / "base-stage1"
    if not (base / "config.json").is_file():
        raise SystemExit(f"{base}: no base after SFT (a LoRA run of this script saves one)")
    return [str(run / "config.yaml"), f"model={base}", "stages=[rl]"]


@dataclass(frozen=True)
class Process:
    wall_s: float
    evals_at: list[float]
    """Seconds into the process at which each held-out evaluation ended."""
    cpu_s: float
    peak_rss_gb: float


def train(args: list[str], out: Path, name: str, log_name: str) -> Process:
    """One `tracerl train` process (run `name` in `out`), its output logged line by line
    with the seconds since it started."""
    cmd = [sys.executable, "-m", "tracerl.cli", "train", *args, f"out_dir={out}",
           f"name={name}", "log.progress_every_s=60", "--overwrite"]
    start = time.perf_counter()
    evals_at: list[float] = []
    with (out / log_name).open("w") as log:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(f"{time.perf_counter() - start:8.1f}s {line}")
            log.flush()
            if "held-out success" in line:
                evals_at.append(time.perf_counter() - start)
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{name} failed; see {out / log_name}")
    return Process(time.perf_counter() - start, evals_at, usage.ru_utime + usage.ru_stime,
                   usage.ru_maxrss / 2**20)


def rl_steps(args: list[str]) -> int:
    """The RL steps `args` ask for: the last `rl.steps=`, else the model's preset's."""
    from tracerl.policy.zoo import preset

    given = [a.split("=", 1)[1] for a in args if a.startswith("rl.steps=")]
    if given:
        return int(given[-1])
    model = [a.split("=", 1)[1] for a in args if a.startswith("model=")][-1]
    return int(preset(model).get("rl.steps", RLConfig.steps))


def run_seed(seed: int, out: Path, overrides: list[str], from_sft: Path | None = None,
             rl_categories: list[str] | None = None) -> SeedRun:
    """One seed's SFT and RL in one process; with `rl_categories`, two: the SFT on every
    category (its base saved, the evaluations around its zero RL steps cut to one task),
    then RL from that base drawing only `rl_categories` (`task.bfcl.train_categories`);
    both evaluations of the result are the RL process's, and the times add up."""
    name = f"seed{seed}"
    sft: Process | None = None
    if rl_categories:
        from_sft = out / "sft"
        from_sft.mkdir(exist_ok=True)
        sft = train([*RECIPE, f"seed={seed}", *overrides, "rl.steps=0", "eval.tasks=1"],
                    from_sft, name, f"{name}.log")
        overrides = [*overrides, f"rl.steps={rl_steps([*RECIPE, *overrides])}",
                     f"task.bfcl.train_categories=[{','.join(rl_categories)}]"]
    rl = train([*recipe(seed, from_sft), f"seed={seed}", *overrides], out, name,
               f"{name}.log")
    after_sft, after_rl = eval_scores(out / name, name)
    rl_s = rl.wall_s - rl.evals_at[0] if rl.evals_at else float("nan")
    before = [sft] if sft is not None else []
    return SeedRun(seed, after_sft, after_rl, sum(p.wall_s for p in [*before, rl]), rl_s,
                   sum(p.cpu_s for p in [*before, rl]),
                   max(p.peak_rss_gb for p in [*before, rl]), eval_habits(out / name, name))


def zero_shot(out: Path, overrides: list[str], per_category: int) -> dict:
    """The untrained model on the ids the trainer evaluates (the first `per_category`
    of each category's fixed order: BfclFamily.eval_tasks)."""
    model = next(o.split("=", 1)[1] for o in [*RECIPE, *overrides] if o.startswith("model="))
    keep = [o for o in overrides if o.startswith(("dtype=", "threads=", "rl.max_", "sampler.",
                                                  "task.bfcl.single_turn="))]
    report = out / "zero_shot.json"
    cmd = [sys.executable, "-m", "tracerl.cli", "eval", model, *LIMITS, *keep,
           "--family", "bfcl", "--categories", *AST, "--temperature", "0",
           "--tasks-per-category", str(per_category), "--out", str(report)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"zero-shot eval failed:\n{done.stdout}\n{done.stderr}")
    print(done.stdout, flush=True)
    data = json.loads(report.read_text())
    data["wall_s"] = time.perf_counter() - start
    return data


def bootstrap_gain(runs: list[SeedRun], resamples: int = 10_000, seed: int = 0
                   ) -> tuple[float, float]:
    """95% interval of the mean (over seeds) RL-minus-SFT gain in Non-Live AST points,
    resampling held-out tasks within each category (one resample for every seed)."""
    ids = sorted(runs[0].after_sft)
    by_category: dict[str, list[str]] = defaultdict(list)
    for i in ids:
        by_category[category_of(i)].append(i)
    rng = random.Random(seed)
    gains = []
    for _ in range(resamples):
        picks = [[rng.choice(members) for _ in members] for members in by_category.values()]
        gains.append(statistics.fmean(
            100 * statistics.fmean(statistics.fmean(run.after_rl[i] - run.after_sft[i]
                                                    for i in pick) for pick in picks)
            for run in runs))
    gains.sort()
    return gains[int(0.025 * resamples)], gains[int(0.975 * resamples) - 1]


def t_interval(values: list[float]) -> tuple[float, float]:
    if len(values) < 2:
        return float("nan"), float("nan")
    half = T_975.get(len(values) - 1, 1.96) * statistics.stdev(values) / len(values) ** 0.5
    return statistics.mean(values) - half, statistics.mean(values) + half


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("overrides", nargs="*", metavar="key=value")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--zero-shot", action="store_true", help="also score the untrained model")
    ap.add_argument("--per-category", type=int, default=15,
                    help="held-out ids scored per category (the same ids for every seed)")
    ap.add_argument("--parallel", action="store_true",
                    help="run the seeds at once, each with threads=1")
    ap.add_argument("--out", help="where the runs go (default: a temporary directory)")
    ap.add_argument("--rl-categories", nargs="+", metavar="CATEGORY", choices=AST,
                    help="SFT on every category, then RL drawing only these categories' "
                         "train ids (two processes a seed; the evaluations still score all)")
    ap.add_argument("--from-sft", type=Path, metavar="DIR",
                    help="RL only, from the SFT of an earlier run of this script in DIR "
                         "(its seedN/config.yaml and seedN/base-stage1): the same "
                         "starting points for another RL recipe")
    args = ap.parse_args()
    if args.rl_categories and args.from_sft is not None:
        ap.error("--rl-categories runs its own SFT; leave out --from-sft")
    overrides = [f"eval.tasks={args.per_category * len(AST)}", *args.overrides]
    out = Path(args.out or tempfile.mkdtemp(prefix="bfcl-learning-"))
    out.mkdir(parents=True, exist_ok=True)
    start = (f"RL from the SFT in {args.from_sft}" if args.from_sft else ' '.join(RECIPE))
    if args.rl_categories:
        start += f" (SFT, then RL on {', '.join(args.rl_categories)} only)"

    print(f"recipe: {start} {' '.join(overrides)}\nseeds {args.seeds}, runs in {out}, "
          f"load average at start {os.getloadavg()[0]:.2f}", flush=True)
    if args.zero_shot:
        z = zero_shot(out, overrides, args.per_category)
        cats = {c["category"]: c["accuracy"] for c in z["categories"]}
        print(f"zero-shot: Non-Live AST {z['sections']['Non-Live AST']:.1f} "
              f"({', '.join(f'{c} {a:.1f}' for c, a in cats.items())}), "
              f"{z['wall_s'] / 60:.1f} min", flush=True)
    if args.parallel:
        with ThreadPoolExecutor(len(args.seeds)) as pool:
            runs = list(pool.map(lambda s: run_seed(s, out, ["threads=1", *overrides],
                                                    args.from_sft, args.rl_categories),
                                 args.seeds))
    else:
        runs = [run_seed(s, out, overrides, args.from_sft, args.rl_categories)
                for s in args.seeds]
    for r in runs:
        s = r.seed
        sft, rl = non_live_ast(r.after_sft), non_live_ast(r.after_rl)
        print(f"seed {s}: Non-Live AST after SFT {sft:.1f} -> after RL {rl:.1f} "
              f"({rl - sft:+.1f}); tasks {100 * statistics.fmean(r.after_sft.values()):.1f} "
              f"-> {100 * statistics.fmean(r.after_rl.values()):.1f}; "
              f"after RL by category {per_category(r.after_rl)}; held-out episodes that "
              f"repeat a call {r.habits[0].repeats} -> {r.habits[1].repeats}, cut "
              f"{r.habits[0].cut} -> {r.habits[1].cut} (of {len(r.after_rl)}); "
              f"wall {r.wall_s / 60:.1f} min (RL and last eval {r.rl_s / 60:.1f}), "
              f"CPU {r.cpu_s / 60:.1f} min, peak RSS {r.peak_rss_gb:.2f} GB", flush=True)
        (out / "seeds.json").write_text(json.dumps(
            [{"seed": x.seed, "wall_s": x.wall_s, "rl_s": x.rl_s, "cpu_s": x.cpu_s,
              "peak_rss_gb": x.peak_rss_gb, "after_sft": x.after_sft,
              "after_rl": x.after_rl, "habits": [asdict(h) for h in x.habits]}
             for x in runs], indent=1))
    sft = [non_live_ast(r.after_sft) for r in runs]
    rl = [non_live_ast(r.after_rl) for r in runs]
    gains = [b - a for a, b in zip(sft, rl, strict=True)]
    lo, hi = t_interval(gains)
    blo, bhi = bootstrap_gain(runs)
    spread = statistics.stdev(rl) if len(rl) > 1 else 0.0
    print(f"mean over {len(runs)} seeds: Non-Live AST after SFT {statistics.mean(sft):.1f}, "
          f"after RL {statistics.mean(rl):.1f} (std {spread:.1f}); RL over SFT "
          f"{statistics.mean(gains):+.1f} points, t interval [{lo:+.1f}, {hi:+.1f}], "
          f"task bootstrap [{blo:+.1f}, {bhi:+.1f}]; wall <= "
          f"{max(r.wall_s for r in runs) / 60:.1f} min, peak RSS <= "
          f"{max(r.peak_rss_gb for r in runs):.2f} GB")


if __name__ == "__main__":
    main()

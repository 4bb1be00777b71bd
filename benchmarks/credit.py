"""Credit assignment on a long horizon: does turn-level credit beat trajectory-level?

Task: `doors` (src/tracerl/envs/doors.py): a corridor of 16-20 doors, one key per
turn, a free filler action (`.`), at most 2 mistakes, reward 1 only when the last door
opens. An episode is 18-30 decisions ending in one bit.

Policy: the tiny character model (hidden 64, 2 layers, 0.1 M parameters) with a compact
chat template (a turn is its key and the end-of-turn token, an observation is the next
sign: 3 tokens a turn instead of ChatML's ~23), built here, so an RL step costs about a
second of one core. One SFT checkpoint on demonstrations that wait (filler) and make
mistakes (more often on hard doors) is shared by every run; it succeeds about 40%
of the time. Every method then runs the same RL budget through `rl_step`, the one RL
path of `tracerl train`:

  trajectory   rl.advantage=grpo: the outcome advantage on every turn (baseline)
  mt_grpo      MT-GRPO with the ground-truth step evaluator (credit.evaluator=subgoal:
               1 opened / 0.5 filler / 0 mistake), calibrated against Monte Carlo
               branches at step 0 (falls back to trajectory level if not trusted)
  mt_grpo_trusted  the same evaluator used without calibration (trusted by fiat)
  gigpo        GiGPO: anchor states (doors opened, mistakes), gamma 0.95, no evaluator
  ppo          PPO with a critic (token GAE, gamma = lambda = 1)
  turn_gae     bi-level GAE: critic + the calibrated evaluator's turn rewards
  wrong_uncal  MT-GRPO with an evaluator right on easy doors and inverted on hard ones
               (credit.fault=hard_inverted), calibration off
  wrong_cal    the same evaluator, calibration on (tracerl should detect it and fall back)

Measured per step (the step's 32 training episodes on fresh train tasks, sampled at
T=1: an on-policy success estimate): success, filler-action rate, mistake rate on easy
and on hard doors. Steps to threshold = the first step whose success averaged over the
last `--window` steps reaches `--threshold`. At the end, held-out success on
`--eval-tasks` tasks. Every step is appended to OUT/steps.jsonl and every finished run
to OUT/runs.jsonl as it happens, so a sweep cut short keeps what it measured.

    python benchmarks/credit.py --out runs/bench-credit            # SFT, then the sweep
    python benchmarks/credit.py --out runs/bench-credit --report-only
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from tracerl.credit.calibration import spearman
from tracerl.credit.evaluators import StepEvaluator
from tracerl.envs.doors import FILLER, DoorsFamily, action_of, filler_rate, walk
from tracerl.policy.lora import trainable_parameters
from tracerl.policy.model import TinySpec, load_policy, write_tiny
from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.evaluate import evaluate_policy
from tracerl.train.optim import adamw
from tracerl.train.rl_step import RLStep
from tracerl.train.runner import build_runner, build_task_family
from tracerl.train.step import rl_step
from tracerl.train.trainer import Trainer
from tracerl.types import Trajectory

# A turn is "<key><|im_end|>", an observation the next sign: nothing else is rendered.
COMPACT_TEMPLATE = (
    "{%- for m in messages -%}{{- m['content'] or '' -}}"
    "{%- if m['role'] == 'assistant' -%}{{- '<|im_end|>' -}}{%- endif -%}{%- endfor -%}")
TINY = TinySpec(hidden_size=64, layers=2, heads=2, intermediate_size=192, max_positions=256)
COMMON = ["task.family=doors", "rl.max_turns=40", "rl.max_turn_tokens=2",
          "rl.max_response_tokens=160", "log.progress=false", "log.tensorboard=false",
          "trace.enabled=false", "eval.temperature=1.0", "device=cpu"]
# The demonstrations may make up to 4 mistakes (RL allows 2), so the cold start fails often.
SFT = ["stages=[sft]", "sft.batch_size=16", "task.doors.slack=4"]
CALIBRATION = ["credit.calibration_states=24", "credit.calibration_samples=8"]
METHODS = {
    "trajectory": ["rl.advantage=grpo"],
    "mt_grpo": ["rl.advantage=mt_grpo", "credit.evaluator=subgoal", *CALIBRATION],
    "wrong_uncal": ["rl.advantage=mt_grpo", "credit.evaluator=subgoal",
                    "credit.fault=hard_inverted", "credit.calibrate=false"],
    "wrong_cal": ["rl.advantage=mt_grpo", "credit.evaluator=subgoal",
                  "credit.fault=hard_inverted", *CALIBRATION],
    "mt_grpo_trusted": ["rl.advantage=mt_grpo", "credit.evaluator=subgoal",
                        "credit.calibrate=false"],
    "gigpo": ["rl.advantage=gigpo", "rl.gamma=0.95"],
    "ppo": ["rl.advantage=gae", "rl.critic_warmup=2"],
    "turn_gae": ["rl.advantage=turn_gae", "credit.evaluator=subgoal", "rl.critic_warmup=2",
                 *CALIBRATION],
}
COLOURS = {"trajectory": "tab:gray", "mt_grpo": "tab:blue", "mt_grpo_trusted": "tab:cyan",
           "gigpo": "tab:green", "ppo": "tab:orange", "turn_gae": "tab:purple",
           "wrong_uncal": "tab:red", "wrong_cal": "tab:brown"}


def build_base(path: Path, seed: int) -> Path:
    """The untrained tiny policy with the compact chat template."""
    write_tiny(path, TINY, seed)
    policy = load_policy(path)
    policy.tokenizer.chat_template = COMPACT_TEMPLATE
    policy.tokenizer.save_pretrained(str(path))
    return path


def train_sft(out: Path, args: argparse.Namespace) -> Path:
    base = build_base(out / "base", 0)
    cfg = configlib.load(TrainConfig, None, COMMON + SFT + [
        f"model={base}", "seed=0", f"sft.demos={args.sft_demos}", f"sft.epochs={args.sft_epochs}",
        f"sft.lr={args.sft_lr}",
        f"eval.tasks={args.eval_tasks}", "name=sft", f"out_dir={out}"])
    summary = Trainer(cfg, out / "sft").run()
    print(f"SFT held-out success: {[e['success'] for e in summary.evals]}", flush=True)
    return sorted((out / "sft" / "checkpoints").glob("stage1-*"))[-1]


@dataclass(frozen=True)
class StepFigures:
    success: float
    filler: float
    """Filler turns / all turns."""
    easy_mistakes: float
    """Mistakes / non-filler turns at easy doors."""
    hard_mistakes: float
    """Mistakes / non-filler turns at hard doors."""


def step_figures(trajectories: list[Trajectory]) -> StepFigures:
    tries = {False: 0, True: 0}
    wrong = {False: 0, True: 0}
    for t in trajectories:
        signs = t.task.metadata["signs"]
        states = walk(t)
        for k, turn in enumerate(t.turns):
            if action_of(turn.action_text) == FILLER:
                continue
            hard = signs[states[k].opened].isupper()
            tries[hard] += 1
            wrong[hard] += states[k + 1].opened == states[k].opened
    success = sum((t.outcome_reward or 0.0) >= 1.0 for t in trajectories) / len(trajectories)
    return StepFigures(success, filler_rate(trajectories),
                       wrong[False] / max(1, tries[False]), wrong[True] / max(1, tries[True]))


def run_method(sft_dir: Path, method: str, seed: int, args: argparse.Namespace,
               out: Path) -> dict:
    cfg = configlib.load(TrainConfig, None, COMMON + METHODS[method] + [
        "stages=[rl]", f"model={sft_dir}", f"seed={seed}", f"rl.steps={args.max_steps}",
        f"rl.tasks_per_step={args.tasks}", f"rl.group_size={args.group}",
        f"rl.lr={args.lr}", f"rl.critic_lr={args.lr}"])
    torch.manual_seed(seed)
    policy = load_policy(sft_dir)
    family = build_task_family(cfg)
    runner = build_runner(cfg, policy, family)
    learner = RLStep(policy, cfg, family, runner)
    optimizer = adamw(trainable_parameters(policy.model), cfg.rl.lr)
    t0 = time.time()
    history = []
    truth_rho = None
    for step in range(args.max_steps):
        result = rl_step(learner, runner, family, optimizer, step)
        if step == 0 and learner.evaluator is not None:
            truth_rho = round(against_truth(learner.evaluator, family, result.trajectories), 3)
        figures = step_figures(result.trajectories)
        calib = result.metrics.update.calibration
        row = {"method": method, "seed": seed, "step": step, **figures.__dict__,
               "trusted": None if calib is None else calib.trusted,
               "spearman": None if calib is None else round(calib.spearman, 3)}
        history.append(row)
        with (out / "steps.jsonl").open("a") as f:
            f.write(json.dumps(row) + "\n")
    heldout = family.tasks("heldout", args.eval_tasks, 10_000 + seed)
    final, _ = evaluate_policy(runner, heldout, 1, 1.0)
    successes = [h["success"] for h in history]
    calib = learner.calibration
    return {"method": method, "seed": seed,
            "steps_to_threshold": steps_to_threshold(successes, args.threshold, args.window),
            "final_success": final.success, "wall_s": round(time.time() - t0, 1),
            "truth_spearman": truth_rho,
            "trusted": None if calib is None else calib.trusted,
            "spearman": None if calib is None else round(calib.spearman, 3),
            "calib_accuracy": None if calib is None else round(calib.accuracy, 3)}


def against_truth(evaluator: StepEvaluator, family: DoorsFamily,
                  trajectories: list[Trajectory]) -> float:
    """Spearman of the evaluator's scores with the family's true turn advantages, over
    every turn of the step's trajectories (no rollouts: the value is in closed form)."""
    states = [(t, k) for t in trajectories for k in range(len(t.turns))]
    return spearman([evaluator(t, k) for t, k in states],
                    [family.advantage(t, k) for t, k in states])


def steps_to_threshold(successes: list[float], threshold: float, window: int) -> int | None:
    """First step (1-based count of steps done) whose trailing mean success >= threshold."""
    for i in range(window - 1, len(successes)):
        if statistics.mean(successes[i - window + 1:i + 1]) >= threshold:
            return i + 1
    return None


def steps_to_collapse(successes: list[float], window: int) -> int | None:
    """First step whose trailing mean success is <= 0.1 (a run that unlearned the task)."""
    for i in range(window - 1, len(successes)):
        if statistics.mean(successes[i - window + 1:i + 1]) <= 0.1:
            return i + 1
    return None


T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and its 95% t-interval (n - 1 degrees of freedom)."""
    m = statistics.mean(values)
    if len(values) < 2:
        return m, float("nan"), float("nan")
    half = T95.get(len(values) - 1, 1.96) * statistics.stdev(values) / math.sqrt(len(values))
    return m, m - half, m + half


def report(runs: list[dict], steps: list[dict], args: argparse.Namespace) -> None:
    """A markdown table: steps to threshold (an unreached run counts as --max-steps, so its
    mean is a lower bound) and final held-out success, each a mean with its 95% interval
    over seeds (success intervals clipped to [0, 1]); filler rate and hard-door mistake
    rate over the first and last 5 steps; wall time per run. Then the evaluator rows:
    ground truth and calibration per seed."""
    print(f"\n| method | seeds | steps to success >= {args.threshold:.2f}: per seed | mean "
          "[95% CI] | final held-out success [95% CI] | filler rate, first 5 -> last 5 "
          "steps | hard-door mistakes, first 5 -> last 5 | wall s / run |")
    print("|---|---:|---|---|---|---|---|---:|")
    for method in METHODS:
        rows = sorted((r for r in runs if r["method"] == method), key=lambda r: r["seed"])
        if not rows:
            continue
        per_seed = ", ".join(str(r["steps_to_threshold"] or f">{args.max_steps}")
                             for r in rows)
        m, lo, hi = mean_ci([r["steps_to_threshold"] or args.max_steps for r in rows])
        f, flo, fhi = mean_ci([r["final_success"] for r in rows])
        hist = [s for s in steps if s["method"] == method]
        last = max(s["step"] for s in hist)

        def early_late(key: str, hist: list[dict] = hist, last: int = last) -> str:
            early = statistics.mean(s[key] for s in hist if s["step"] < 5)
            late = statistics.mean(s[key] for s in hist if s["step"] > last - 5)
            return f"{early:.3f} -> {late:.3f}"

        wall = statistics.mean(r["wall_s"] for r in rows)
        print(f"| {method} | {len(rows)} | {per_seed} | {m:.1f} [{lo:.1f}, {hi:.1f}] | "
              f"{f:.3f} [{max(0.0, flo):.3f}, {min(1.0, fhi):.3f}] | {early_late('filler')} | "
              f"{early_late('hard_mistakes')} | {wall:.0f} |")
    print()
    for method in METHODS:
        rows = sorted((r for r in runs if r["method"] == method), key=lambda r: r["seed"])
        collapse = [steps_to_collapse([s["success"] for s in steps if s["method"] == method
                                       and s["seed"] == r["seed"]], args.window) for r in rows]
        if any(c is not None for c in collapse):
            print(f"{method}: steps until trailing success <= 0.1, per seed {collapse}")
        truth = [r.get("truth_spearman") for r in rows if r.get("truth_spearman") is not None]
        if truth:
            print(f"{method}: evaluator vs ground truth at step 0, Spearman per seed {truth}")
        trusted = [r["trusted"] for r in rows if r["trusted"] is not None]
        if trusted:
            print(f"{method}: calibration trusted {sum(trusted)}/{len(trusted)}, Spearman per "
                  f"seed {[r['spearman'] for r in rows]}")


PANELS = [("success", "training success (T=1)"), ("filler", "filler-action rate"),
          ("hard_mistakes", "mistake rate, hard doors")]
ROWS = [("the methods", ["trajectory", "mt_grpo", "mt_grpo_trusted", "gigpo", "ppo",
                         "turn_gae"]),
        ("wrong evaluator", ["trajectory", "wrong_uncal", "wrong_cal"])]


def plot(steps: list[dict], args: argparse.Namespace, path: Path) -> None:
    """Success, filler rate and hard-door mistakes per RL step, seed means (each seed's
    success thin): the methods on the top row, the wrong evaluator on the bottom one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, grid = plt.subplots(len(ROWS), len(PANELS), figsize=(15, 8))
    for axes, (title, methods) in zip(grid, ROWS, strict=True):
        for method in methods:
            hist = [s for s in steps if s["method"] == method]
            if hist:
                _plot_method(axes, method, hist, args.window)
        for ax, (_, name) in zip(axes, PANELS, strict=True):
            ax.set_xlabel("RL step")
            ax.set_title(f"{name} ({title})", fontsize=10)
        axes[0].axhline(args.threshold, ls=":", lw=1, color="black")
        axes[0].legend(fontsize=7)
    fig.suptitle(f"doors (16-20 doors, sparse reward): seed means, {args.window}-step "
                 "moving average")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _plot_method(axes, method: str, hist: list[dict], window: int) -> None:  # noqa: ANN001
    by_step: dict[int, list[dict]] = {}
    for s in hist:
        by_step.setdefault(s["step"], []).append(s)
    xs = sorted(by_step)
    seeds = sorted({s["seed"] for s in hist})
    for ax, (key, _) in zip(axes, PANELS, strict=True):
        ys = _smooth([statistics.mean(s[key] for s in by_step[x]) for x in xs], window)
        ax.plot([x + 1 for x in xs], ys, color=COLOURS[method],
                label=f"{method} ({len(seeds)} seeds)",
                ls="--" if method.startswith("wrong") else "-")
    for seed in seeds:
        run = sorted((s for s in hist if s["seed"] == seed), key=lambda s: s["step"])
        axes[0].plot([s["step"] + 1 for s in run],
                     _smooth([s["success"] for s in run], window),
                     color=COLOURS[method], lw=0.6, alpha=0.35)


def _smooth(ys: list[float], window: int) -> list[float]:
    return [statistics.mean(ys[max(0, i - window + 1):i + 1]) for i in range(len(ys))]


def resume(out: Path) -> set[tuple[str, int]]:
    """The (method, seed) runs OUT already finished; step rows of an unfinished run (the
    sweep was cut short inside it) are dropped, so it is measured again from step 0."""
    runs_path, steps_path = out / "runs.jsonl", out / "steps.jsonl"
    done = {(r["method"], r["seed"]) for r in load_jsonl(runs_path)} if runs_path.is_file() \
        else set()
    if steps_path.is_file():
        kept = [s for s in load_jsonl(steps_path) if (s["method"], s["seed"]) in done]
        steps_path.write_text("".join(json.dumps(s) + "\n" for s in kept))
    return done


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="runs/bench-credit")
    p.add_argument("--sft-dir", default="")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--max-steps", type=int, default=30)
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--lr", type=float, default=4e-4)
    p.add_argument("--threshold", type=float, default=0.9)
    p.add_argument("--window", type=int, default=3)
    p.add_argument("--eval-tasks", type=int, default=96)
    p.add_argument("--sft-demos", type=int, default=1600)
    p.add_argument("--sft-epochs", type=int, default=4)
    p.add_argument("--sft-lr", type=float, default=3e-3)
    p.add_argument("--plot", default="docs/credit_doors.png")
    p.add_argument("--report-only", action="store_true",
                   help="re-print the table and plot from OUT/runs.jsonl and OUT/steps.jsonl")
    args = p.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        sft_dir = Path(args.sft_dir) if args.sft_dir else train_sft(out, args)
        done = resume(out)
        for seed in args.seeds:
            for method in args.methods:
                if (method, seed) in done:
                    continue
                r = run_method(sft_dir, method, seed, args, out)
                with (out / "runs.jsonl").open("a") as f:
                    f.write(json.dumps(r) + "\n")
                print(json.dumps(r), flush=True)
    runs, steps = load_jsonl(out / "runs.jsonl"), load_jsonl(out / "steps.jsonl")
    report(runs, steps, args)
    if args.plot:
        plot(steps, args, Path(args.plot))


if __name__ == "__main__":
    main()

"""Credit assignment on a long-horizon task: RL steps to a fixed held-out success.

Task: `maze` (8-9 move tool calls per episode, a move budget of distance + 2, so two
wasted moves fail the episode). One SFT checkpoint (oracle demonstrations with
detours, so the cold start wanders) is shared by every run; from it, each method runs
RL with the same rollout budget per step, and a held-out evaluation (sampled at
temperature 1, the policy being trained; greedy decoding already avoids the detours)
on `--eval-tasks` tasks every `--eval-every` steps stops the run once success reaches
`--target`. Reported: the first step at which held-out success >= target (or "not
reached" within `--max-steps`), per seed, and wall time.

Methods (the baseline is the first):
  trajectory   rl.advantage=grpo: the outcome advantage on every token (trajectory level)
  turn         rl.advantage=mt_grpo with credit.evaluator=subgoal (the maze's "moved
               closer" check), calibrated against Monte Carlo branches at step 0
  ppo          rl.advantage=gae: PPO with a critic (value head on a copy of the policy)

    python benchmarks/credit.py --sft-dir DIR     # reuse an SFT checkpoint
    python benchmarks/credit.py                   # train the SFT checkpoint first
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.trainer import Trainer

COMMON = ["task.family=maze", "task.maze.min_moves=8", "task.maze.max_moves=9",
          "tiny.hidden_size=64", "tiny.heads=2", "tiny.intermediate_size=192",
          "tiny.layers=2", "tiny.max_positions=600", "rl.max_turns=11",
          "rl.max_turn_tokens=24", "rl.max_response_tokens=500", "log.progress=false",
          "log.tensorboard=false", "trace.enabled=false", "eval.temperature=1.0"]
SFT = ["stages=[sft]", "sft.demos=9600", "sft.epochs=1", "sft.batch_size=16", "sft.lr=0.001"]
METHODS = {
    "trajectory": ["rl.advantage=grpo"],
    "turn": ["rl.advantage=mt_grpo", "credit.evaluator=subgoal", "rl.turn_weight=1.0",
             "credit.calibration_states=24", "credit.calibration_samples=8"],
    "ppo": ["rl.advantage=gae", "rl.critic_warmup=2", "rl.lam=1.0"],
}


def train_sft(out: Path, seed: int) -> Path:
    cfg = configlib.load(TrainConfig, None, COMMON + SFT + [
        f"seed={seed}", "eval.tasks=20", f"name=sft-{seed}", f"out_dir={out}"])
    Trainer(cfg, out / f"sft-{seed}").run()
    ckpts = sorted((out / f"sft-{seed}" / "checkpoints").glob("stage1-*"))
    return ckpts[-1]


def run_method(out: Path, sft_dir: Path, method: str, seed: int, args) -> dict:
    name = f"{method}-s{seed}"
    cfg = configlib.load(TrainConfig, None, COMMON + METHODS[method] + [
        "stages=[rl]", f"model={sft_dir}", f"seed={seed}", f"name={name}", f"out_dir={out}",
        f"rl.steps={args.max_steps}", f"rl.tasks_per_step={args.tasks}",
        f"rl.group_size={args.group}", f"rl.lr={args.lr}", f"eval.tasks={args.eval_tasks}",
        f"eval.every={args.eval_every}", f"rl.stop_at_success={args.target}",
        "log.checkpoint_every=1000"])
    t0 = time.time()
    summary = Trainer(cfg, out / name).run()
    evals = [(e["step"], e["success"]) for e in summary.evals]
    reached = next((s for s, v in evals if v >= args.target), None)
    return {"method": method, "seed": seed, "steps_to_target": reached, "evals": evals,
            "wall_s": round(time.time() - t0, 1)}


def plot(results: list[dict], target: float, path: Path) -> None:
    """Held-out success against RL step, one line per run, a colour per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    colours = {"trajectory": "tab:gray", "turn": "tab:blue", "ppo": "tab:orange"}
    for r in results:
        steps, success = zip(*r["evals"], strict=True)
        label = r["method"] if r["seed"] == results[0]["seed"] else None
        ax.plot(steps, success, marker="o", ms=3, color=colours.get(r["method"]), label=label,
                alpha=0.8)
    ax.axhline(target, ls="--", lw=1, color="black")
    ax.set_xlabel("RL step")
    ax.set_ylabel("held-out success (T=1)")
    ax.set_title("maze (8-9 moves): trajectory vs turn-level credit vs PPO")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def report(results: list[dict], args: argparse.Namespace) -> None:
    """Steps to target per seed, and the mean held-out success over the evaluations after
    step 0 (less noisy than a first crossing of the target)."""
    print(f"\nmethod      steps to success >= {args.target:.2f} per seed   "
          "mean success after step 0   wall s")
    for method in args.methods:
        rows = [r for r in results if r["method"] == method]
        shown = " ".join(str(r["steps_to_target"]) if r["steps_to_target"] is not None
                         else f">{args.max_steps}" for r in rows)
        later = [v for r in rows for s, v in r["evals"] if s > 0]
        mean = statistics.mean(later) if later else float("nan")
        print(f"{method:<11} {shown:<34} {mean:>10.3f}   {sum(r['wall_s'] for r in rows):10.0f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default="runs/bench-credit")
    p.add_argument("--sft-dir", default="")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--methods", nargs="+", default=list(METHODS))
    p.add_argument("--max-steps", type=int, default=24)
    p.add_argument("--tasks", type=int, default=6)
    p.add_argument("--group", type=int, default=6)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--eval-tasks", type=int, default=64)
    p.add_argument("--eval-every", type=int, default=3)
    p.add_argument("--target", type=float, default=0.9)
    p.add_argument("--plot", default="docs/credit_benchmark.png")
    p.add_argument("--report-only", action="store_true",
                   help="re-print the table and plot from OUT/results.json")
    args = p.parse_args()
    out = Path(args.out)
    if args.report_only:
        results = json.loads((out / "results.json").read_text())
        report(results, args)
        if args.plot:
            plot(results, args.target, Path(args.plot))
        return
    sft_dir = Path(args.sft_dir) if args.sft_dir else train_sft(out, 0)
    results = []
    for seed in args.seeds:
        for method in args.methods:
            r = run_method(out, sft_dir, method, seed, args)
            results.append(r)
            print(json.dumps(r), flush=True)
    report(results, args)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    if args.plot:
        plot(results, args.target, Path(args.plot))


if __name__ == "__main__":
    main()

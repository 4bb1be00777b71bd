"""Async against sync RL with slow tools, Ray against one process (issue 13).

Same config, same seed, `calc` with a tool latency of 200 ms per call: the default
sync loop (sample a batch, then update) against `rl.mode=async` (a rollout worker
process samples continuously while the learner updates; its own knobs in ASYNC), each
run in its own process so peak RSS is per mode. Then, for seed 0, `runtime=ray` (the
learner, 2 rollout workers and a reward worker as actors) against the single-process
async run, and per-component costs (sampling, tool waits, update, weight sync, object
sizes) with the ratio they predict.

    python benchmarks/async.py [--model RUN_DIR] [--seeds 3] [--steps 12] [--latency 200]
                               [--ray-workers 2] [key=value ...]

Without --model the starting policy is the default `tracerl train` SFT stage (SFT
below), built once into ~/.cache/tracerl/bench and reused: the build takes about 4-5
min on a quiet 2-core machine (27 min at nice 19 under load), and its policy solves
about half the held-out tasks. Throughput is trajectories trained per second of RL
step time (sync: rollout + update; async: waiting for groups + update + weight sync);
held-out success is `eval.tasks` tasks at the end. Step 1 is left out of the
throughput in both modes (in async it also waits for the worker process to start).
Peak RSS is the learner's process; the async worker's (a child) is shown beside it.
The ratio is printed last: `async/sync throughput: N.NNx`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing as mp
import os
import pickle
import queue
import resource
import statistics
import tempfile
import time
from pathlib import Path

BASE = ["rl.tasks_per_step=4", "rl.group_size=4", "rl.max_turns=3",
        "rl.drop_uniform_groups=false", "eval.tasks=100", "log.progress=false",
        "log.tensorboard=false", "trace.enabled=false", "threads=1", "stages=[rl]",
        "log.checkpoint_every=1000"]


def _train(model: str, overrides: list[str], out: str) -> dict[str, float]:
    """One RL run in this (child) process; its figures and peak RSS."""
    import torch

    from tracerl.policy.model import load_policy
    from tracerl.train import configlib
    from tracerl.train.config import TrainConfig
    from tracerl.train.evaluate import resolve
    from tracerl.train.trainer import Trainer

    torch.set_num_threads(1)
    cfg = configlib.load(TrainConfig, None, overrides)
    policy = load_policy(resolve(Path(model))[0], name="tiny")
    summary = Trainer(cfg, run_dir=out, policy=policy).run()
    rows = [json.loads(line) for line in (Path(out) / "metrics.jsonl").read_text().splitlines()]
    rl = [r for r in rows if r["stage"] == "rl"][1:]  # step 1 also starts the workers
    step_s = sum(r["rollout_s"] + r["update_s"] + r.get("weight_sync_s", 0.0) for r in rl)
    trajs = len(rl) * cfg.rl.tasks_per_step * cfg.rl.group_size

    def mean(key: str) -> float:
        """Per-step mean: the async worker's counters arrive every 0.5 s, so most steps
        read 0 and a few read several steps' worth (a median of them says nothing)."""
        return statistics.mean(r.get(key, 0.0) for r in rl)

    return {"traj_s": trajs / step_s, "success": summary.success_after,
            "success_before": summary.success_before or 0.0,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
            "wait_s": mean("rollout_s"), "sample_s": mean("sample_s"),
            "update_s": mean("update_s"), "sync_s": mean("weight_sync_s"),
            "staleness": statistics.mean(r.get("staleness_mean", 0.0) for r in rl),
            "stale": rl[-1].get("stale_groups", 0.0), "tool_use": statistics.mean(
                r["tool_use"] for r in rl)}


def _child(model: str, overrides: list[str], out: str, results: mp.Queue) -> None:
    results.put(_train(model, overrides, out))


def run(model: str, overrides: list[str], out: Path) -> dict[str, float]:
    """`_train` in a fresh process (not a Pool's: the async worker is its child)."""
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    proc = ctx.Process(target=_child, args=(model, overrides, str(out), results))
    proc.start()
    while True:  # a child that dies (its traceback is on stderr) must not hang the benchmark
        try:
            result = results.get(timeout=1.0)
            break
        except queue.Empty:
            if not proc.is_alive():
                raise RuntimeError(f"the {out.name} run died (exit code {proc.exitcode})") from None
    proc.join()
    return result


ASYNC = ["rl.mode=async", "rl.tis_cap=2", "rl.buffer_groups=16", "rl.max_staleness=4"]
"""The async arm's own knobs. 16 groups in flight (4 steps' worth, against the default 8)
let the worker sample 64 episodes per sampler call instead of 32 staggered ones; with the
tiny model a sampler call costs about the same for either, so sampling per trajectory
halves (measured: 1.25 -> 0.59 s per step of 16). The groups are then up to 4 versions
old, so max_staleness is 4 (none were dropped); TIS corrects for the staleness."""

SFT = ["stages=[sft]", "eval.tasks=100", "log.progress=false", "log.tensorboard=false",
       "trace.enabled=false", "threads=1"]
"""The starting policy: the default `tracerl train` SFT stage (38400 demonstrations),
one thread. It solves about half the held-out calc tasks (docs/benchmarks.md)."""


def sft_policy() -> str:
    """The default SFT stage's run directory, built once and cached (keyed on its
    overrides): about 4-5 min on a quiet 2-core machine, reused after that."""
    import shutil

    from tracerl.train import configlib
    from tracerl.train.config import TrainConfig
    from tracerl.train.trainer import Trainer

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tracerl"
    key = hashlib.sha1(" ".join(SFT).encode()).hexdigest()[:10]
    run = cache / "bench" / f"async-sft-{key}"
    if (run / "summary.json").is_file():
        success = json.loads((run / "summary.json").read_text())["success_after"]
        print(f"starting policy: {run} (cached; held-out success {success:.2f})", flush=True)
        return str(run)
    shutil.rmtree(run, ignore_errors=True)  # a build cut short starts again
    t0 = time.perf_counter()
    summary = Trainer(configlib.load(TrainConfig, None, SFT), run_dir=run).run()
    print(f"starting policy: built {run} in {time.perf_counter() - t0:.0f} s (the default "
          f"SFT stage; held-out success {summary.success_after:.2f})", flush=True)
    return str(run)


def sizes(model: str) -> tuple[float, float]:
    """MB of one weight snapshot (what a sync sends) and KB of one pickled group."""
    from tracerl.policy.model import load_policy
    from tracerl.policy.weights import trained_weights
    from tracerl.train import configlib
    from tracerl.train.config import TrainConfig
    from tracerl.train.evaluate import resolve
    from tracerl.train.runner import build_runner, build_task_family

    cfg = configlib.load(TrainConfig, None, BASE)
    policy = load_policy(resolve(Path(model))[0], name="tiny")
    family = build_task_family(cfg)
    groups = build_runner(cfg, policy, family).run(family.tasks("train", 4, seed=1))
    weights = len(pickle.dumps(trained_weights(policy.model))) / 1e6
    group = statistics.mean(len(pickle.dumps(g)) for g in groups) / 1e3
    return weights, group


def _line(seed: int, mode: str, r: dict[str, float], wall: float) -> str:
    if mode == "sync":
        parts = (f"rollout {r['wait_s']:.2f} s (sampling {r['sample_s']:.2f} s, tool waits and "
                 f"envs {r['wait_s'] - r['sample_s']:.2f} s)  update {r['update_s']:.2f} s")
    else:
        parts = (f"learner waits {r['wait_s']:.2f} s  update {r['update_s']:.2f} s  weight sync "
                 f"{r['sync_s'] * 1e3:.0f} ms  (worker sampling {r['sample_s']:.2f} s)  "
                 f"staleness {r['staleness']:.2f}  stale groups {r['stale']:.0f}")
    return (f"seed {seed} {mode:5s}: {r['traj_s']:5.1f} traj/s  held-out success "
            f"{r['success_before']:.2f} -> {r['success']:.2f}  per step: {parts}  peak RSS "
            f"{r['rss_mb']:.0f} MB (+ worker {r['worker_rss_mb']:.0f} MB)  ({wall:.0f} s)")


def expected_ratio(sync: list[dict[str, float]], asyn: list[dict[str, float]]) -> str:
    """The ratio the per-component times predict: a sync step is its rollout plus its
    update; an async step is the slower of the learner (update + weight sync) and the
    worker's sampling of one step's trajectories (tool waits hidden behind other
    episodes' sampling). Beside it, the async step as measured (the learner's wait for
    groups included) and how busy that kept the worker's sampler: under 100% the worker
    idles on tool waits or on jobs the learner has not handed out yet."""
    def mean(rows: list[dict[str, float]], key: str) -> float:
        return statistics.mean(r[key] for r in rows)

    sync_step = mean(sync, "wait_s") + mean(sync, "update_s")
    learner = mean(asyn, "update_s") + mean(asyn, "sync_s")
    worker = mean(asyn, "sample_s")
    measured = mean(asyn, "wait_s") + learner
    return (f"per step (means over steps and seeds): sync = rollout {mean(sync, 'wait_s'):.2f} s "
            f"(sampling {mean(sync, 'sample_s'):.2f} s) + update {mean(sync, 'update_s'):.2f} s "
            f"= {sync_step:.2f} s; async = max(learner {learner:.2f} s, worker sampling "
            f"{worker:.2f} s) = {max(learner, worker):.2f} s; expected ratio "
            f"{sync_step / max(learner, worker):.2f}x; async measured {measured:.2f} s "
            f"(learner waits {mean(asyn, 'wait_s'):.2f} s, worker sampler busy "
            f"{worker / measured:.0%})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a run directory (its latest checkpoint); default: the "
                                    "default SFT stage, built once and cached")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--latency", type=float, default=200.0, help="ms per tool call")
    ap.add_argument("--ray-workers", type=int, default=2, help="0 skips the Ray run")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="tracerl-async-"))
    model = args.model or sft_policy()
    common = [*BASE, f"rl.steps={args.steps}", f"task.calc.tool_latency={args.latency:g}",
              *args.overrides]
    asyn = ASYNC
    print(f"calc, tool latency {args.latency:g} ms, {args.steps} steps of 4 tasks x G=4, "
          f"tiny policy from {model}", flush=True)
    results: dict[str, list[dict[str, float]]] = {"sync": [], "async": []}
    for seed in range(args.seeds):
        for mode, extra in (("sync", []), ("async", asyn)):
            t0 = time.perf_counter()
            r = run(model, [*common, f"seed={seed}", *extra], tmp / f"{mode}-{seed}")
            results[mode].append(r)
            print(_line(seed, mode, r, time.perf_counter() - t0), flush=True)
    for mode, rows in results.items():
        succ = [r["success"] for r in rows]
        sd = statistics.stdev(succ) if len(succ) > 1 else 0.0
        print(f"{mode:5s}: {statistics.mean(r['traj_s'] for r in rows):6.1f} traj/s, held-out "
              f"success {statistics.mean(succ):.3f} +- {sd:.3f} (sd over {len(rows)} seeds), "
              f"peak RSS {max(r['rss_mb'] for r in rows):.0f} MB")
    print(expected_ratio(results["sync"], results["async"]))
    if args.ray_workers:
        r = run(model, [*common, "seed=0", *asyn, "runtime=ray",
                        f"ray.rollout_workers={args.ray_workers}"], tmp / "ray")
        local = results["async"][0]["traj_s"]
        print(f"ray, {args.ray_workers} rollout workers: {r['traj_s']:.1f} traj/s "
              f"({r['traj_s'] / local:.2f}x the single-process async run), held-out success "
              f"{r['success']:.2f}, driver peak RSS {r['rss_mb']:.0f} MB, weight sync "
              f"{r['sync_s'] * 1e3:.1f} ms")
    w_mb, g_kb = sizes(model)
    print(f"sizes: weights {w_mb:.1f} MB per sync, one group {g_kb:.0f} KB pickled; "
          f"benchmark wall {time.perf_counter() - started:.0f} s")
    ratio = (statistics.mean(r["traj_s"] for r in results["async"])
             / statistics.mean(r["traj_s"] for r in results["sync"]))
    print(f"async/sync throughput: {ratio:.2f}x")


if __name__ == "__main__":
    main()

"""Rollout and update throughput of the default `tracerl train` config.

Measured in one run, on the same model and contexts:
  1. rollout: the multi-turn RolloutRunner on `calc` (sampled tokens/s, trajectories/s);
  2. sampler vs baseline: our batched KV-cache sampler (finished rows leave the batch)
     against transformers' `generate` on the same single-turn contexts;
  3. update: the RL step's update (RLStep.update, as `tracerl train` runs it) in
     tokens/s on the rollout batch;
  4. tracing overhead: the same rollouts with every trajectory recorded as spans, inline,
     on a background thread, and in a separate process (the trainer's default).

    python benchmarks/throughput.py [--batches 3] [--model RUN_DIR_OR_MODEL] [key=value ...]

Without --model the policy is the freshly initialised tiny one, whose rollouts are
random text; pass a trained run (e.g. runs/calc-tiny) to measure realistic episodes.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from tracerl.policy.model import load_policy, write_tiny
from tracerl.policy.sampler import SamplingParams
from tracerl.trace.offload import OffloadedTracer
from tracerl.trace.records import guardrail_records
from tracerl.trace.tracer import Tracer
from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.evaluate import resolve
from tracerl.train.rl_step import RLStep
from tracerl.train.runner import build_runner, build_task_family


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--model", help="a run directory (its latest checkpoint) or model directory")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    cfg: TrainConfig = configlib.load(TrainConfig, None, args.overrides)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    tmp = Path(tempfile.mkdtemp())
    if args.model:
        policy = load_policy(resolve(Path(args.model))[0])
    else:
        policy = load_policy(write_tiny(tmp / "tiny", cfg.tiny, cfg.seed))
    family = build_task_family(cfg)
    r = cfg.rl
    runner = build_runner(cfg, policy, family)
    sampler = runner.sampler
    print(f"model: tiny {policy.num_parameters() / 1e6:.2f}M params, threads "
          f"{torch.get_num_threads()}, batch {r.tasks_per_step} tasks x G={r.group_size}")
    runner.run(family.tasks("train", 2, seed=99))  # warm-up

    sampled = seconds = trajs = 0.0
    groups_all = []
    for b in range(args.batches):
        t0 = time.perf_counter()
        groups = runner.run(family.tasks("train", r.tasks_per_step, seed=b))
        seconds += time.perf_counter() - t0
        sampled += runner.stats.sampled_tokens
        trajs += sum(len(g.trajectories) for g in groups)
        groups_all.append(groups)
    print(f"rollout: {sampled / seconds:,.0f} sampled tok/s, {trajs / seconds:.1f} traj/s "
          f"({seconds / args.batches:.2f} s per batch)")

    contexts = [t.prompt_ids for g in groups_all[0] for t in g.trajectories]
    params = SamplingParams(1.0, 1.0, r.max_turn_tokens, policy.stop_ids)
    t0 = time.perf_counter()
    ours = sampler.generate(contexts, params)
    ours_s = time.perf_counter() - t0
    ours_tok = sum(len(s.ids) for s in ours)
    base_tok, base_s = _hf_generate(policy, contexts, r.max_turn_tokens)
    print(f"sampler: ours {ours_tok / ours_s:,.0f} tok/s vs transformers.generate "
          f"{base_tok / base_s:,.0f} tok/s -> {(ours_tok / ours_s) / (base_tok / base_s):.2f}x")

    opt = torch.optim.AdamW(policy.model.parameters(), lr=r.lr)
    learner = RLStep(policy, cfg, family, runner)
    tokens = up_s = 0.0
    for step, groups in enumerate(groups_all):
        for g in groups:  # give every trajectory a non-zero advantage so all are trained
            for i, t in enumerate(g.trajectories):
                t.outcome_reward = float(i % 2)
        t0 = time.perf_counter()
        done = learner.update(groups, opt, step, torch.Generator())
        up_s += time.perf_counter() - t0
        assert done.update is not None
        tokens += sum(len(t.token_ids()) for g in groups for t in g.trajectories)
    print(f"update: {tokens / up_s:,.0f} tok/s (prompt + response tokens, forward + backward)")

    tracer = Tracer.for_run(tmp)
    first = groups_all[0][0].trajectories[0]
    tracer.record_trajectory(first, run="warm-up", guardrails=guardrail_records(first))

    t0 = time.perf_counter()
    for groups in groups_all:
        for g in groups:
            for t in g.trajectories:
                tracer.record_trajectory(t, run="bench", step=0, model_name="tiny",
                                         guardrails=guardrail_records(t))
    trace_s = time.perf_counter() - t0
    tracer.close()
    print(f"tracing, inline: {trace_s / trajs * 1e3:.2f} ms per trajectory = "
          f"{100 * trace_s / seconds:.1f}% of rollout time")
    _tracing_overhead(runner, family, r, args.batches, tmp)


def _tracing_overhead(runner, family, r, batches: int, tmp: Path) -> None:
    """Rollout throughput untraced vs traced as the trainer does it (every trajectory
    submitted after its batch), on a background thread and in a separate process.

    The three modes take turns batch by batch, on the same tasks and each first as
    often as the others, so drift in the machine's speed hits all of them alike;
    throughput is sampled tokens per second (batches differ in length). Tracers start
    before timing (a once-per-run cost); their final flush is timed and reported apart.
    """
    tracers: dict[str, Tracer | OffloadedTracer | None] = {
        "untraced": None, "background thread": Tracer.for_run(tmp / "thread"),
        "separate process (default)": OffloadedTracer.for_run(tmp / "process")}
    for tracer in tracers.values():
        if tracer is not None:
            tracer.flush()  # started and ready
    seconds = dict.fromkeys(tracers, 0.0)
    tokens = dict.fromkeys(tracers, 0.0)
    names = list(tracers)
    for b in range(3 * batches):
        tasks = family.tasks("train", r.tasks_per_step, seed=b)
        for name in names[b % 3:] + names[:b % 3]:  # each mode goes first equally often
            tracer = tracers[name]
            t0 = time.perf_counter()
            groups = runner.run(tasks)
            if tracer is not None:
                for g in groups:
                    for t in g.trajectories:
                        tracer.submit(t, run="bench", step=b, model_name="tiny",
                                      guardrails=guardrail_records(t))
            seconds[name] += time.perf_counter() - t0
            tokens[name] += runner.stats.sampled_tokens
    base = tokens["untraced"] / seconds["untraced"]
    print(f"tracing, end to end over {3 * batches} batches per mode (rollout tok/s):")
    for name, tracer in tracers.items():
        rate = tokens[name] / seconds[name]
        flush = ""
        if tracer is not None:
            t0 = time.perf_counter()
            tracer.close()
            flush = f"; final flush {time.perf_counter() - t0:.2f} s"
        print(f"  {name:28s}{rate:9,.0f} tok/s  overhead {100 * (1 - rate / base):+5.1f}%{flush}")


def _hf_generate(policy, contexts: list[list[int]], max_new: int) -> tuple[int, float]:
    width = max(len(c) for c in contexts)
    ids = torch.full((len(contexts), width), policy.pad_id)
    mask = torch.zeros_like(ids)
    for i, c in enumerate(contexts):
        ids[i, width - len(c):] = torch.tensor(c)
        mask[i, width - len(c):] = 1
    t0 = time.perf_counter()
    with torch.no_grad():
        out = policy.model.generate(input_ids=ids, attention_mask=mask, do_sample=True,
                                    max_new_tokens=max_new, eos_token_id=list(policy.stop_ids),
                                    pad_token_id=policy.pad_id, top_k=0)
    seconds = time.perf_counter() - t0
    new = out[:, width:]
    tokens = 0
    for row in new.tolist():  # count up to and including the first stop id
        n = next((j + 1 for j, t in enumerate(row) if t in policy.stop_ids), len(row))
        tokens += n
    return tokens, seconds


if __name__ == "__main__":
    main()

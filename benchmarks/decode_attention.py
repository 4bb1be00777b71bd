"""Decoding attention (tracerl.policy.attention) against transformers' SDPA, on SmolLM2.

Two measurements, each run with the model's attention set to `sdpa` and to
`tracerl_sdpa` (one model, switched between calls; the order alternates call by call):

  throughput  the sampler (TransformersSampler, no prefix store) continues the opening
              prompts of `--rows` calc tasks for exactly `--tokens` tokens each (no stop
              ids), temperature 1; median tokens/s over `--repeats` calls a side.
  drift       the calc rollouts of `--tasks` held-out tasks x G=8 at temperature 1, as
              training samples them; |trainer - sampler| log-probability of every
              sampled token, the trainer's pass being the RL update's (a whole-sequence
              pass, SDPA in both arms). exp(delta) is what PPO clips.

The policy is set up as `tracerl train model=smollm2-135m` sets it up (LoRA r16; on a CPU
with bfloat16 arithmetic `dtype=auto` is bfloat16). Only the decoding step differs between
the arms: prefill and training passes run SDPA in both.

    python benchmarks/decode_attention.py [--dtype auto|bfloat16|float32] [--repeats 3]
        [--rows 32] [--tokens 48] [--tasks 16] [--threads 2] [--sections throughput drift]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from bf16_mismatch import deltas, row

from tracerl.policy.attention import DECODE_ATTENTION
from tracerl.policy.model import Policy, load_policy
from tracerl.policy.precision import resolve_precision, weights_dtype
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams
from tracerl.rollout.demos import episode_openings
from tracerl.rollout.render import ChatRenderer
from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.model_setup import prepare_policy
from tracerl.train.runner import build_task_family

ARMS = ("sdpa", DECODE_ATTENTION)


def openings(policy: Policy, cfg: TrainConfig, rows: int) -> list[list[int]]:
    """The token ids the sampler sees at the first turn of `rows` held-out calc tasks."""
    family = build_task_family(cfg, policy)
    renderer = ChatRenderer(policy.tokenizer)
    tasks = family.tasks("heldout", rows, seed=0)
    return [renderer.prompt_ids(prompt, tools)
            for prompt, tools in episode_openings(family.make_env, tasks)]


def throughput(policy: Policy, contexts: list[list[int]], tokens: int, repeats: int
               ) -> dict[str, float]:
    params = SamplingParams(temperature=1.0, max_new_tokens=tokens)
    rates: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for i in range(repeats):
        for arm in ARMS if i % 2 == 0 else ARMS[::-1]:
            policy.model.set_attn_implementation(arm)
            sampler = TransformersSampler(policy.model, policy.pad_id, seed=i,
                                          prefix_cache_mb=0)
            start = time.perf_counter()
            out = sampler.generate(contexts, params)
            rates[arm].append(sum(len(s.ids) for s in out) / (time.perf_counter() - start))
    return {arm: statistics.median(r) for arm, r in rates.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="auto", choices=["auto", "bfloat16", "float32"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sections", nargs="+", default=["throughput", "drift"],
                    choices=["throughput", "drift"])
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dtype = resolve_precision(args.dtype, "cpu")
    cfg: TrainConfig = configlib.load(TrainConfig, None, [
        "model=smollm2-135m", f"dtype={dtype}", "rl.temperature=1.0"])
    policy = prepare_policy(load_policy("smollm2-135m", dtype=weights_dtype(dtype)), cfg)
    print(f"SmolLM2-135M, LoRA r{cfg.lora.r}, {dtype} weights, {args.threads} threads")
    if "throughput" in args.sections:
        contexts = openings(policy, cfg, args.rows)
        rates = throughput(policy, contexts, args.tokens, args.repeats)
        lengths = sorted(map(len, contexts))
        print(f"throughput: {len(contexts)} rows (prompts {lengths[0]}-{lengths[-1]} "
              f"tokens) x {args.tokens} tokens, median of {args.repeats}: sdpa "
              f"{rates['sdpa']:.1f} tok/s, {DECODE_ATTENTION} {rates[DECODE_ATTENTION]:.1f} "
              f"tok/s, {rates[DECODE_ATTENTION] / rates['sdpa']:.2f}x", flush=True)
    if "drift" in args.sections:
        tasks = build_task_family(cfg, policy).tasks("heldout", args.tasks, seed=0)
        print(f"drift: {args.tasks} held-out calc tasks x G={cfg.rl.group_size}, "
              f"temperature {cfg.rl.temperature}")
        print(f"{'decoding':15} {'tokens':>7} {'mean |d|':>10} {'p99 |d|':>10} "
              f"{'max |d|':>10} {'|r-1|>0.2':>11}")
        for arm in ARMS:
            policy.model.set_attn_implementation(arm)
            print(row(arm, deltas(policy, cfg, policy.model, tasks)), flush=True)


if __name__ == "__main__":
    main()

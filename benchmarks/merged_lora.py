"""Merged-adapter sampling (tracerl.policy.merged_lora) against peft's LoRA layers.

The policy is set up as `tracerl train model=MODEL` sets it up (`--model`, default
smollm2-135m; its preset: LoRA r16 on every linear layer of each block, and on a CPU with
bfloat16 arithmetic `dtype=auto` is bfloat16) and trained with the preset's SFT on `calc`
demonstrations first, so the adapter is a trained one (a fresh adapter has B = 0 and
merges to the base exactly). Then, with `sampler.merge_lora` off (`peft`) and on (`merged`):

  throughput  the sampler continues the opening prompts of `--rows` held-out calc tasks
              for exactly `--tokens` tokens each (no stop ids), temperature 1; median
              tokens/s over `--repeats` calls a side, the order alternating call by call.
  drift       the calc rollouts of `--tasks` held-out tasks x G=8 at temperature 1, as
              training samples them; |trainer - sampler| log-probability of every sampled
              token, the trainer's pass being the RL update's (peft, whole sequence) in
              both arms. exp(delta) is what PPO clips and `rl.tis_cap` weights.

    python benchmarks/merged_lora.py [--model smollm2-135m|gemma3-270m]
        [--dtype auto|bfloat16|float32] [--repeats 5]
        [--rows 32] [--tokens 48] [--tasks 16] [--threads 2] [key=value ...]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from bf16_mismatch import deltas, row
from decode_attention import openings

from tracerl.policy.model import load_policy
from tracerl.policy.precision import resolve_precision, weights_dtype
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams
from tracerl.rollout.render import ChatRenderer
from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.model_setup import prepare_policy
from tracerl.train.runner import build_task_family
from tracerl.train.sft import demonstrations, run_sft

ARMS = {"peft": False, "merged": True}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m", help="a zoo name or model directory")
    ap.add_argument("--dtype", default="auto", choices=["auto", "bfloat16", "float32"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dtype = resolve_precision(args.dtype, "cpu")
    cfg: TrainConfig = configlib.load(TrainConfig, None, [
        f"model={args.model}", f"dtype={dtype}", "rl.temperature=1.0", *args.overrides])
    policy = prepare_policy(load_policy(args.model, dtype=weights_dtype(dtype)), cfg)
    family = build_task_family(cfg, policy)
    demos = demonstrations(family, ChatRenderer(policy.tokenizer), cfg.sft.demos, cfg.seed)
    start = time.perf_counter()
    final = run_sft(policy, demos, cfg.sft, cfg.seed, micro_tokens=cfg.micro_batch_tokens)[-1]
    print(f"{args.model}, LoRA r{cfg.lora.r}, {dtype} weights, {args.threads} threads; "
          f"after {final.step} SFT steps (loss {final.loss:.3f}, "
          f"{time.perf_counter() - start:.0f} s)", flush=True)
    samplers = {arm: TransformersSampler(policy.model, policy.pad_id,
                                         tokenizer=policy.tokenizer, prefix_cache_mb=0,
                                         merge_lora=merge) for arm, merge in ARMS.items()}
    start = time.perf_counter()
    samplers["merged"].merged.refresh()  # type: ignore[union-attr]
    print(f"one merge of the adapter: {time.perf_counter() - start:.2f} s")

    contexts = openings(policy, cfg, args.rows)
    params = SamplingParams(temperature=1.0, max_new_tokens=args.tokens)
    rates: dict[str, list[float]] = {arm: [] for arm in ARMS}
    for i in range(args.repeats):
        for arm in list(ARMS) if i % 2 == 0 else list(ARMS)[::-1]:
            samplers[arm].generator = torch.Generator().manual_seed(i)
            start = time.perf_counter()
            out = samplers[arm].generate(contexts, params)
            rates[arm].append(sum(len(s.ids) for s in out) / (time.perf_counter() - start))
    lengths = sorted(map(len, contexts))
    median = {arm: statistics.median(r) for arm, r in rates.items()}
    print(f"throughput: {len(contexts)} rows (prompts {lengths[0]}-{lengths[-1]} tokens) x "
          f"{args.tokens} tokens, median of {args.repeats}: peft {median['peft']:.1f} tok/s, "
          f"merged {median['merged']:.1f} tok/s, {median['merged'] / median['peft']:.2f}x",
          flush=True)
    print("  each call, tok/s: " + "; ".join(
        f"{arm} " + " ".join(f"{r:.0f}" for r in rs) for arm, rs in rates.items()))

    tasks = family.tasks("heldout", args.tasks, seed=0)
    print(f"drift: {args.tasks} held-out calc tasks x G={cfg.rl.group_size}, "
          f"temperature {cfg.rl.temperature}; the trainer's pass is peft's in both")
    print(f"{'sampler':15} {'tokens':>7} {'mean |d|':>10} {'p99 |d|':>10} {'max |d|':>10} "
          f"{'|r-1|>0.2':>11}")
    for arm, sampler in samplers.items():
        sampler.generator = torch.Generator().manual_seed(1)
        print(row(arm, deltas(policy, cfg, policy.model, tasks, sampler)), flush=True)


if __name__ == "__main__":
    main()

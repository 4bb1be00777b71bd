"""Sampling throughput: tracerl's TransformersSampler against `transformers.generate`.

Same model, same contexts (chat prompts "Say a number i"), temperature 1, no top-k /
top-p, the same stop ids and max new tokens, batch 8 and 32, fp32 and bf16 weights;
the two samplers alternate call by call (which one goes first alternates too) so drift
in machine load hits both alike. Tokens count up to and including the first stop id;
`generate` keeps finished rows in the batch as padding, ours drops them.

Two more sections (fp32): where the rollout runner calls the sampler, on the event
loop's thread (now) or in a fresh worker thread per rollout batch (`asyncio.to_thread`
inside `asyncio.run`, as it did before); and the cost of the sampler's prefill asking
for logits at every prompt position instead of the last one.

    python benchmarks/sampling.py [--reps 3] [--tokens 32] [--threads N] [--model DIR]
                                  [--only tiny|real] [--sections compare runner prefill]

Models: a tiny Qwen2 built locally (benchmarks/local_models.py) and SmolLM2-135M when its
directory exists (default ~/.cache/tracerl/models/smollm2-135m; --model DIR).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
from local_models import absent, model_dirs

from tracerl.policy.model import Policy, load_policy
from tracerl.policy.sampler import TransformersSampler, _left_pad
from tracerl.policy.sampling import SamplingParams
from tracerl.rollout.render import ChatRenderer
from tracerl.train.threads import choose_threads
from tracerl.types import Message


def contexts(policy: Policy, n: int) -> list[list[int]]:
    renderer = ChatRenderer(policy.tokenizer)
    return [renderer.prompt_ids([Message("user", f"Say a number {i}")]) for i in range(n)]


def hf_generate(policy: Policy, ctx: list[list[int]], max_new: int) -> int:
    """transformers' generate on the left-padded contexts; tokens up to the first stop."""
    width = max(len(c) for c in ctx)
    ids = torch.full((len(ctx), width), policy.pad_id)
    mask = torch.zeros_like(ids)
    for i, c in enumerate(ctx):
        ids[i, width - len(c):] = torch.tensor(c)
        mask[i, width - len(c):] = 1
    with torch.no_grad():
        out = policy.model.generate(input_ids=ids, attention_mask=mask, do_sample=True,
                                    max_new_tokens=max_new, eos_token_id=list(policy.stop_ids),
                                    pad_token_id=policy.pad_id, top_k=0, top_p=1.0,
                                    temperature=1.0)
    stops = set(policy.stop_ids)
    return sum(next((j + 1 for j, t in enumerate(row) if t in stops), len(row))
               for row in out[:, width:].tolist())


def alternate(fns: dict[str, Callable[[], int]], reps: int) -> dict[str, float]:
    """tokens/s of each fn over `reps` timed calls after one warm-up call each."""
    tokens = dict.fromkeys(fns, 0)
    seconds = dict.fromkeys(fns, 0.0)
    names = list(fns)
    for r in range(reps + 1):
        for name in names if r % 2 else names[::-1]:
            t0 = time.perf_counter()
            n = fns[name]()
            if r:
                seconds[name] += time.perf_counter() - t0
                tokens[name] += n
    return {k: tokens[k] / seconds[k] for k in fns}


def compare(policy: Policy, batch: int, max_new: int, reps: int) -> float:
    sampler = TransformersSampler(policy.model, policy.pad_id, seed=0)
    ctx = contexts(policy, batch)
    params = SamplingParams(1.0, 1.0, max_new, policy.stop_ids)
    rate = alternate({
        "tracerl": lambda: sum(len(s.ids) for s in sampler.generate(ctx, params)),
        "generate": lambda: hf_generate(policy, ctx, max_new)}, reps)
    ratio = rate["tracerl"] / rate["generate"]
    print(f"    batch {batch:3d}: tracerl {rate['tracerl']:8,.0f} tok/s   transformers.generate "
          f"{rate['generate']:8,.0f} tok/s   -> {ratio:.2f}x")
    return ratio


def where_the_runner_samples(policy: Policy, batch: int, max_new: int, reps: int) -> None:
    sampler = TransformersSampler(policy.model, policy.pad_id, seed=0)
    ctx = contexts(policy, batch)
    params = SamplingParams(1.0, 1.0, max_new, policy.stop_ids)

    def count(samples) -> int:
        return sum(len(s.ids) for s in samples)

    async def on_loop() -> int:
        return count(sampler.generate(ctx, params))

    async def in_thread() -> int:
        return count(await asyncio.to_thread(sampler.generate, ctx, params))

    rate = alternate({"loop": lambda: asyncio.run(on_loop()),
                      "thread": lambda: asyncio.run(in_thread())}, reps)
    print(f"  runner, batch {batch}: sampler on the event loop's thread {rate['loop']:,.0f} tok/s,"
          f" in a worker thread {rate['thread']:,.0f} tok/s -> "
          f"{rate['loop'] / rate['thread']:.2f}x")


def prefill_logits(policy: Policy, batch: int, reps: int) -> None:
    """The prefill forward with logits at every prompt position (what the sampler asks
    for) against the last position only (transformers' logits_to_keep=1, as generate)."""
    ids, mask = _left_pad(contexts(policy, batch), policy.pad_id, torch.device("cpu"))
    positions = (mask.cumsum(-1) - 1).clamp(min=0)

    def prefill(**kw) -> int:
        with torch.no_grad():
            policy.model(input_ids=ids, attention_mask=mask, position_ids=positions, **kw)
        return 1

    rate = alternate({"all": prefill, "last": lambda: prefill(logits_to_keep=1)}, reps)
    print(f"  prefill, batch {batch} x {ids.shape[1]} tokens: logits at every position "
          f"{1 / rate['all']:.3f} s, at the last only {1 / rate['last']:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="timed calls per sampler and setting")
    ap.add_argument("--tokens", type=int, default=32, help="max new tokens")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: tracerl's choice)")
    ap.add_argument("--model", help="the real model's directory (default: tracerl's smollm2-135m)")
    ap.add_argument("--batches", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--only", choices=["tiny", "real"])
    ap.add_argument("--sections", nargs="+", default=["compare", "runner", "prefill"],
                    choices=["compare", "runner", "prefill"])
    args = ap.parse_args()
    torch.set_num_threads(choose_threads(args.threads).threads)
    warnings.filterwarnings("ignore")
    print(f"threads {torch.get_num_threads()}, load average at start "
          f"{os.getloadavg()[0]:.2f} ({os.cpu_count()} cores), {args.tokens} new tokens max")
    tmp = Path(tempfile.mkdtemp())
    ratios = []
    for name, path in model_dirs(tmp, args.model):
        if args.only and args.only != ("tiny" if name == "qwen2-tiny" else "real"):
            continue
        if path is None:
            print(f"{name}: {absent(args.model)}")
            continue
        for dtype in (torch.float32, torch.bfloat16):
            if dtype is torch.bfloat16 and "compare" not in args.sections:
                continue  # the other sections run in fp32 only
            policy = load_policy(path, dtype=dtype)
            print(f"  {name} {str(dtype).removeprefix('torch.')} "
                  f"({policy.num_parameters() / 1e6:.1f}M parameters)")
            if "compare" in args.sections:
                ratios += [compare(policy, b, args.tokens, args.reps) for b in args.batches]
            if dtype is torch.float32 and "runner" in args.sections:
                where_the_runner_samples(policy, args.batches[0], args.tokens, args.reps)
            if dtype is torch.float32 and "prefill" in args.sections:
                for b in args.batches:
                    prefill_logits(policy, b, args.reps)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    if ratios:
        print(f"tracerl/generate tokens per second, geometric mean: "
              f"{statistics.geometric_mean(ratios):.2f}x")


if __name__ == "__main__":
    main()

"""Peak memory and step time of one training update on a SmolLM2-135M-sized model.

Every configuration runs in a fresh process, because peak RSS (getrusage's ru_maxrss) is
per process: build a Llama of SmolLM2-135M's shape (hidden 576, 30 layers, 9 heads, 3 KV
heads, intermediate 1536, vocabulary 49,152, tied embeddings; random weights, nothing is
downloaded), prepare it as `tracerl train` does (`dtype`, `gradient_checkpointing`,
`lora.*`: tracerl.train.model_setup.prepare_policy), then run `--steps` updates on a
batch of B x L random tokens: token log-probabilities, a policy-gradient loss, backward,
AdamW on the trainable parameters. The first step is a warm-up (it also allocates the
optimiser state) and is not timed, but its memory counts.

Printed per configuration: peak RSS, the growth of RSS during the steps over the RSS
just before them (weights already built), the median step time, and both as ratios to
the first row (full fine-tuning, float32, unchunked: the trainer before chunked
log-probabilities), measured in the same run.

Each child runs with MALLOC_MMAP_THRESHOLD_=131072 (unless --default-malloc): glibc then
maps every block over 128 KiB on its own and returns it when freed, so RSS follows the
live tensors. With its default, dynamic threshold freed activations stay in the heap and
the peaks depend on allocation order (LoRA then measured *above* full fine-tuning).

"unchunked" is the previous `token_logprobs`, kept here as the baseline: the model's
(B, L, V) logits at once, then log-softmax over all of them.

    python benchmarks/memory.py [--batch 8] [--length 256] [--steps 2] [--threads 2]
                                [--only 0 1 3 ...] [--layers 30] [--default-malloc]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from tracerl.policy.lora import trainable_parameters
from tracerl.policy.model import Policy
from tracerl.policy.precision import autocast, weights_dtype
from tracerl.train import configlib
from tracerl.train.batch import token_logprobs
from tracerl.train.config import TrainConfig
from tracerl.train.model_setup import prepare_policy

SMOLLM2_135M = dict(hidden_size=576, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, intermediate_size=1536, vocab_size=49152,
                    max_position_embeddings=2048, tie_word_embeddings=True, rms_norm_eps=1e-5)


@dataclass(frozen=True)
class Setting:
    name: str
    overrides: tuple[str, ...]
    chunked: bool = True


SETTINGS = (
    Setting("full  f32      unchunked (before)", (), chunked=False),
    Setting("full  f32      chunked", ()),
    Setting("full  bf16-ac  unchunked", ("dtype=bf16-autocast",), chunked=False),
    Setting("full  bf16-ac  chunked", ("dtype=bf16-autocast",)),
    Setting("full  f32      chunked + grad ckpt", ("gradient_checkpointing=true",)),
    Setting("lora  f32      unchunked", ("lora.r=16",), chunked=False),
    Setting("lora  f32      chunked", ("lora.r=16",)),
    Setting("lora  bf16-ac  chunked", ("lora.r=16", "dtype=bf16-autocast")),
    Setting("lora  bf16     chunked", ("lora.r=16", "dtype=bfloat16")),
    Setting("lora  bf16-ac  chunked + grad ckpt",
            ("lora.r=16", "dtype=bf16-autocast", "gradient_checkpointing=true")),
)


def full_logits_logprobs(model: torch.nn.Module, input_ids: torch.Tensor,
                         attention_mask: torch.Tensor) -> torch.Tensor:
    """The previous token_logprobs: all (B, L, V) logits at once."""
    with autocast(model):
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
    logits = logits[:, :-1].float()  # (B, L-1, V)
    picked = logits.gather(-1, input_ids[:, 1:, None]).squeeze(-1)  # (B, L-1)
    return picked - torch.logsumexp(logits, dim=-1)  # (B, L-1)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def child(setting: Setting, batch: int, length: int, steps: int, threads: int,
          layers: int) -> dict:
    torch.set_num_threads(threads)
    cfg = configlib.load(TrainConfig, None, list(setting.overrides))
    torch.manual_seed(0)
    shape = {**SMOLLM2_135M, "num_hidden_layers": layers}
    model = LlamaForCausalLM(LlamaConfig(**shape)).to(weights_dtype(cfg.dtype))
    policy = prepare_policy(Policy(model, None, (), 0, 0, "smollm2-135m-shape"), cfg)  # type: ignore[arg-type]
    model = policy.model
    model.train()
    params = trainable_parameters(model)
    opt = torch.optim.AdamW(params, lr=1e-5, weight_decay=0.0)
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, SMOLLM2_135M["vocab_size"], (batch, length), generator=gen)
    mask = torch.ones_like(ids)
    advantages = torch.randn(batch, length - 1, generator=gen)
    logprobs = token_logprobs if setting.chunked else full_logits_logprobs
    before = rss_mb()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        logp = logprobs(model, ids, mask)  # (B, L-1)
        loss = -(logp * advantages).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"peak_mb": peak, "step_growth_mb": peak - before, "before_mb": before,
            "step_s": statistics.median(times[1:] or times),
            "trainable": sum(p.numel() for p in params),
            "params": sum(p.numel() for p in model.parameters())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--steps", type=int, default=2, help="updates per setting (first: warm-up)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layers", type=int, default=30, help="fewer for a quick look")
    ap.add_argument("--only", type=int, nargs="*", help="run only these rows (0 = baseline)")
    ap.add_argument("--default-malloc", action="store_true",
                    help="leave glibc's dynamic mmap threshold on (see above)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        result = child(SETTINGS[args.child], args.batch, args.length, args.steps, args.threads,
                       args.layers)
        print(json.dumps(result))
        return
    rows = args.only if args.only else list(range(len(SETTINGS)))
    print(f"SmolLM2-135M shape ({args.layers} layers), batch {args.batch} x {args.length} "
          f"tokens, {args.steps} steps (first untimed), {args.threads} threads, "
          f"torch {torch.__version__}")
    print(f"{'setting':38} {'peak MB':>8} {'step +MB':>9} {'step s':>7} "
          f"{'peak x':>7} {'+MB x':>6} {'time x':>7} {'trainable':>10}")
    env = dict(os.environ)
    if not args.default_malloc:
        env["MALLOC_MMAP_THRESHOLD_"] = "131072"
    base = None
    for i in rows:
        out = subprocess.run([sys.executable, __file__, "--child", str(i), "--batch",
                              str(args.batch), "--length", str(args.length), "--steps",
                              str(args.steps), "--threads", str(args.threads),
                              "--layers", str(args.layers)],
                             capture_output=True, text=True, env=env)
        if out.returncode != 0:
            print(f"{SETTINGS[i].name:38} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        base = base or r
        print(f"{SETTINGS[i].name:38} {r['peak_mb']:8.0f} {r['step_growth_mb']:9.0f} "
              f"{r['step_s']:7.2f} {r['peak_mb'] / base['peak_mb']:7.2f} "
              f"{r['step_growth_mb'] / base['step_growth_mb']:6.2f} "
              f"{r['step_s'] / base['step_s']:7.2f} {r['trainable'] / 1e6:9.2f}M", flush=True)


if __name__ == "__main__":
    main()

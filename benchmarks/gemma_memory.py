"""Peak memory of the real Gemma 3 270M (262,144-token vocabulary) in its preset: one RL
update, one sampling batch, and the critic under LoRA.

Each case runs in a fresh process (peak RSS, getrusage's ru_maxrss, is per process, and
MALLOC_MMAP_THRESHOLD_=131072 makes RSS follow the live tensors, as in memory.py). The
model is `model=gemma3-270m` (built by tracerl.policy.zoo into ~/.cache/tracerl/models),
prepared as `tracerl train` prepares it with the zoo's preset (bfloat16 base, LoRA r16
on every linear layer).

- `update`: token log-probabilities of B x L random tokens, a policy-gradient loss,
  backward and AdamW, as in memory.py; `chunked` is tracerl's token_logprobs (the vocabulary
  projection 48 positions at a time, recomputed in the backward pass), `unchunked` the
  model's full (B, L, V) logits at once (the baseline).
- `sample`: one sampling batch of R rows of a held-out `calc` prompt with the tools
  described (about 330 tokens), up to T new tokens at temperature 1.
- `critic`: RSS added by building the gae critic (tracerl.train.value.ValueModel) on the
  LoRA policy, against a plain deep copy of the decoder (the critic before it shared the
  frozen base).

    nice -n 10 python benchmarks/gemma_memory.py [--batch 8] [--length 256] [--rows 32]
        [--tokens 48] [--threads 1] [--only update-chunked sample ...] [--set dtype=float32]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import time

import torch

from tracerl.envs.calc import CalcFamily
from tracerl.policy.lora import trainable_parameters
from tracerl.policy.model import load_policy
from tracerl.policy.precision import autocast, weights_dtype
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams
from tracerl.rollout.render import ChatRenderer
from tracerl.train import configlib
from tracerl.train.batch import token_logprobs
from tracerl.train.config import TrainConfig
from tracerl.train.model_setup import prepare_policy
from tracerl.train.value import ValueModel

CASES = ("update-chunked", "update-unchunked", "sample", "critic-shared", "critic-copy")


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def full_logits_logprobs(model: torch.nn.Module, ids: torch.Tensor,
                         mask: torch.Tensor) -> torch.Tensor:
    with autocast(model):
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1].float()  # (B, L-1, V)
    picked = logits.gather(-1, ids[:, 1:, None]).squeeze(-1)  # (B, L-1)
    return picked - torch.logsumexp(logits, dim=-1)  # (B, L-1)


def child(case: str, args: argparse.Namespace) -> dict[str, float]:
    torch.set_num_threads(args.threads)
    cfg = configlib.load(TrainConfig, None, ["model=gemma3-270m", *args.set])
    policy = prepare_policy(load_policy("gemma3-270m", dtype=weights_dtype(cfg.dtype)), cfg)
    model, loaded = policy.model, rss_mb()
    t0 = time.perf_counter()
    kept: object = None  # what the case built, alive while RSS is read
    if case.startswith("update"):
        model.train()
        opt = torch.optim.AdamW(trainable_parameters(model), lr=1e-5)
        gen = torch.Generator().manual_seed(0)
        ids = torch.randint(0, 262_144, (args.batch, args.length), generator=gen)
        mask = torch.ones_like(ids)
        adv = torch.randn(args.batch, args.length - 1, generator=gen)
        logprobs = token_logprobs if case == "update-chunked" else full_logits_logprobs
        loss = -(logprobs(model, ids, mask) * adv).mean()
        loss.backward()
        opt.step()
    elif case == "sample":
        family = CalcFamily(describe_tools=True)
        renderer = ChatRenderer(policy.tokenizer)
        task = family.tasks("heldout", 1, 0)[0]
        prompt = renderer.prompt_ids(task.messages, tools=family.make_env().tool_schemas)
        sampler = TransformersSampler(model, policy.pad_id, seed=0, tokenizer=policy.tokenizer,
                                      max_rows=cfg.sampler.max_rows)
        params = SamplingParams(temperature=1.0, max_new_tokens=args.tokens)
        sampler.generate([prompt] * args.rows, params)
    elif case == "critic-shared":
        kept = ValueModel(model)
    else:
        kept = copy.deepcopy(model.get_decoder())
    held = rss_mb() - loaded
    del kept
    return {"loaded_mb": loaded, "peak_mb": peak_mb(), "added_mb": held,
            "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", nargs="*", choices=CASES)
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                    help="config overrides on top of the preset, e.g. dtype=float32")
    ap.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args)))
        return
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
    print(f"gemma3-270m preset {' '.join(args.set)}; update {args.batch} x {args.length}, "
          f"sample {args.rows} rows x {args.tokens} tokens, {args.threads} thread(s), "
          f"load {os.getloadavg()[0]:.1f}")
    for case in args.only or CASES:
        cmd = [sys.executable, __file__, "--child", case, *sys.argv[1:]]
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{case:18s} failed: {out.stderr.strip()[-400:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{case:18s} peak RSS {r['peak_mb'] / 1024:5.2f} GB (model loaded "
              f"{r['loaded_mb'] / 1024:4.2f} GB, still held after {r['added_mb']:+7.0f} MB) "
              f"{r['seconds']:6.1f} s", flush=True)


if __name__ == "__main__":
    main()

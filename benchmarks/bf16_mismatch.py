"""How far the trainer's log-probabilities drift from the sampler's under bfloat16.

The sampler records a behaviour log-probability for every sampled token (float32 weights,
KV cache, left-padded batches); the RL update recomputes it in one teacher-forced pass.
This measures |logp_trainer - logp_sampler| over the action tokens of real rollouts for:

  float32         the same weights and dtype (the floor: batch shape and KV-cache order)
  bf16-autocast   float32 weights, the trainer's forward under bfloat16 autocast
  bfloat16        bfloat16 weights for both the sampler and the trainer

It fine-tunes the tiny policy on `calc` demonstrations first (`--sft-steps`), so that its
distributions are peaked like a trained model's rather than near-uniform. The ratio
exp(delta) is what PPO clips and what `rl.tis_cap` truncates.

    python benchmarks/bf16_mismatch.py [--sft-steps 150] [--tasks 16] [key=value ...]
    python benchmarks/bf16_mismatch.py --model RUN_DIR_OR_MODEL   # as it is, no SFT
"""

from __future__ import annotations

import argparse
import copy
import tempfile
from pathlib import Path

import torch

from tracerl.policy.lora import has_adapter, merge_adapter
from tracerl.policy.model import Policy, load_policy, write_tiny
from tracerl.policy.precision import set_autocast
from tracerl.policy.sampling import Sampler
from tracerl.rollout.render import ChatRenderer
from tracerl.train import configlib
from tracerl.train.batch import collate, token_logprobs
from tracerl.train.checkpoint import load_checkpoint_policy
from tracerl.train.config import TrainConfig
from tracerl.train.evaluate import resolve
from tracerl.train.runner import build_runner, build_task_family
from tracerl.train.sft import demonstrations, run_sft


def deltas(policy: Policy, cfg: TrainConfig, trainer_model: torch.nn.Module,
           tasks: list, sampler: Sampler | None = None) -> torch.Tensor:
    """|trainer - sampler| logprob over every action token of fresh rollouts (`sampler`:
    default the configured one over `policy`; benchmarks/gpu_vllm.py passes vLLM's)."""
    family = build_task_family(cfg)
    torch.manual_seed(1)
    groups = build_runner(cfg, policy, family, sampler).run(tasks)
    trajs = [t for g in groups for t in g.trajectories if t.num_action_tokens > 0]
    batch = collate(trajs, policy.pad_id).to(next(trainer_model.parameters()).device)
    with torch.no_grad():
        logp = token_logprobs(trainer_model.eval(), batch.input_ids, batch.attention_mask,
                              cfg.rl.temperature)
    on = batch.loss_mask.bool()
    return (logp - batch.old_logp)[on].abs()


def row(name: str, d: torch.Tensor) -> str:
    ratio_out = ((d.exp() - 1).abs() > 0.2).float().mean()  # outside a 0.2 clip range
    return (f"{name:15} {d.numel():7d} {d.mean():10.5f} {d.quantile(0.99):10.5f} "
            f"{d.max():10.5f} {ratio_out:11.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sft-steps", type=int, default=150)
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--model", help="a run directory (latest checkpoint) or model directory")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    cfg: TrainConfig = configlib.load(TrainConfig, None, [
        f"sft.demos={args.sft_steps * 16}", "sft.batch_size=16", *args.overrides])
    torch.manual_seed(cfg.seed)
    family = build_task_family(cfg)
    if args.model:
        policy = load_checkpoint_policy(resolve(Path(args.model))[0])
        if has_adapter(policy.model):
            policy = merge_adapter(policy)
        print(f"{args.model} as it is", end="; ")
    else:
        policy = load_policy(write_tiny(Path(tempfile.mkdtemp()) / "tiny", cfg.tiny, cfg.seed))
        demos = demonstrations(family, ChatRenderer(policy.tokenizer), cfg.sft.demos, cfg.seed)
        final = run_sft(policy, demos, cfg.sft, cfg.seed)[-1]
        print(f"tiny policy after {final.step} SFT steps (loss {final.loss:.3f})", end="; ")
    print(f"{args.tasks} {family.name} tasks x G={cfg.rl.group_size}, "
          f"temperature {cfg.rl.temperature}")
    tasks = family.tasks("heldout", args.tasks, seed=cfg.seed)
    print(f"{'trainer':15} {'tokens':>7} {'mean |d|':>10} {'p99 |d|':>10} {'max |d|':>10} "
          f"{'|r-1|>0.2':>11}")
    print(row("float32", deltas(policy, cfg, policy.model, tasks)))
    autocast_model = copy.deepcopy(policy.model)
    set_autocast(autocast_model, torch.bfloat16)
    print(row("bf16-autocast", deltas(policy, cfg, autocast_model, tasks)))
    bf16 = Policy(policy.model.to(torch.bfloat16), policy.tokenizer, policy.stop_ids,
                  policy.turn_end_id, policy.pad_id, policy.name)
    print(row("bfloat16", deltas(bf16, cfg, bf16.model, tasks)))


if __name__ == "__main__":
    main()

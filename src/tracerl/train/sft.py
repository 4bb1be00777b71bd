"""Supervised fine-tuning on oracle demonstrations (observation tokens masked)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import torch

from tracerl.algorithms.losses import loss_share, sft_loss
from tracerl.envs.family import TaskFamily
from tracerl.policy.lora import trainable_parameters
from tracerl.policy.model import Policy
from tracerl.rollout.demos import episode_openings, trajectory_from_messages
from tracerl.rollout.render import ChatRenderer
from tracerl.train.accumulate import PieceLoss, accumulate
from tracerl.train.batch import TokenBatch, collate
from tracerl.train.config import SFTConfig
from tracerl.train.micro import MicroBatch
from tracerl.train.optim import adamw
from tracerl.types import Trajectory


@dataclass(frozen=True)
class SFTStepMetrics:
    step: int
    total_steps: int
    loss: float
    lr: float
    tokens: int


def demonstrations(family: TaskFamily, renderer: ChatRenderer, n: int,
                   seed: int) -> list[Trajectory]:
    """`n` oracle trajectories on train-split tasks, each starting from what a rollout
    of the task starts from (the env's opening messages and the tools it describes)."""
    rng = random.Random(f"demos/{seed}")
    tasks = family.tasks("train", n, seed=seed + 10_000)
    return [trajectory_from_messages(renderer, task, prompt, family.demonstration(task, rng),
                                     tools)
            for task, (prompt, tools) in zip(tasks, episode_openings(family.make_env, tasks),
                                             strict=True)]


def cosine_lr(step: int, total: int, peak: float, warmup_frac: float = 0.05) -> float:
    warmup = max(1, int(total * warmup_frac))
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def _sft_piece_loss(batch: TokenBatch, losses: list[float]) -> PieceLoss:
    """The SFT loss of one piece, scaled by its share of the batch's token mean; each
    piece's value is appended to `losses`."""
    def piece_loss(piece: MicroBatch, part: TokenBatch, logp: torch.Tensor) -> torch.Tensor:
        loss = sft_loss(logp, part.loss_mask) * loss_share(part.loss_mask, batch.loss_mask,
                                                           "token-mean")
        losses.append(loss.item())
        return loss
    return piece_loss


def run_sft(policy: Policy, demos: list[Trajectory], cfg: SFTConfig, seed: int,
            on_step: Callable[[SFTStepMetrics], None] | None = None,
            micro_tokens: int = 0) -> list[SFTStepMetrics]:
    """Train the policy on `demos` for `cfg.epochs`; returns per-step metrics. Each step's
    gradient is accumulated over micro-batches of at most `micro_tokens` positions (0:
    the whole batch at once; tracerl.train.micro), the system prompt the demonstrations
    share run once a step (tracerl.train.accumulate)."""
    model = policy.model
    device = next(model.parameters()).device
    opt = adamw(trainable_parameters(model), cfg.lr)
    rng = random.Random(seed)
    steps_per_epoch = math.ceil(len(demos) / cfg.batch_size)
    total = steps_per_epoch * cfg.epochs
    history: list[SFTStepMetrics] = []
    model.train()
    for epoch in range(cfg.epochs):
        # Plain shuffled batches: sorting by length would put the short tool-less
        # demonstrations together and turn the tool/no-tool choice into alternating,
        # one-sided updates.
        order = list(range(len(demos)))
        rng.shuffle(order)
        for b in range(steps_per_epoch):
            indices = order[b * cfg.batch_size:(b + 1) * cfg.batch_size]
            step = epoch * steps_per_epoch + b
            lr = cosine_lr(step, total, cfg.lr)
            for group in opt.param_groups:
                group["lr"] = lr
            batch = collate([demos[i] for i in indices], policy.pad_id).to(device)
            opt.zero_grad(set_to_none=True)
            pieces: list[float] = []
            accumulate(model, batch, micro_tokens, 1.0, _sft_piece_loss(batch, pieces))
            loss = sum(pieces)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            m = SFTStepMetrics(step + 1, total, loss, lr, int(batch.loss_mask.sum()))
            history.append(m)
            if on_step:
                on_step(m)
    return history

"""The RL update: any policy loss of tracerl.train.methods (ppo, gspo, cispo), optional
truncated IS, KL in the loss, and a critic trained beside the policy (PPO with GAE).

Token advantages arrive ready in the TokenBatch (the RL step computes them with the
configured estimator); this module only optimises.

An optimiser step whose loss or gradient norm is non-finite is skipped: the gradient is
dropped, `optimizer.step()` is not called (so neither the weights nor the optimiser's
moments change), a warning is logged and the step is counted (`skipped_steps`); the
reported means are over the steps applied. NaN or inf in one minibatch would otherwise
turn every weight into NaN for good (issue 32).
"""

from __future__ import annotations

import logging
import math
from dataclasses import astuple, dataclass

import torch
from transformers import PreTrainedModel

from tracerl.algorithms.kl import kl_estimate
from tracerl.algorithms.losses import aggregate, clipped_value_loss, is_stats, loss_share
from tracerl.train.accumulate import accumulate
from tracerl.train.batch import TokenBatch, batch_logprobs
from tracerl.train.config import RLConfig
from tracerl.train.methods import is_weights, policy_loss
from tracerl.train.micro import MicroBatch, micro_batches
from tracerl.train.value import ValueModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Critic:
    model: ValueModel
    optimizer: torch.optim.Optimizer
    returns: torch.Tensor
    """(B, T) value targets from the estimator."""
    old_values: torch.Tensor
    """(B, T) values at rollout time (the clipping anchor)."""


@dataclass(frozen=True)
class PolicyStepStats:
    """One optimiser step on the policy."""

    loss: float
    pg_loss: float
    kl: float
    clip_fraction: float
    approx_kl: float
    grad_norm: float

    @property
    def finite(self) -> bool:
        return all(math.isfinite(v) for v in astuple(self))


@dataclass(frozen=True)
class UpdateMetrics:
    """One RL update (the means over its optimiser steps)."""

    loss: float
    """Policy loss plus kl_coef * KL (0 while the critic warms up)."""
    pg_loss: float
    kl: float
    """KL to the reference in the loss (0 without one)."""
    clip_fraction: float
    approx_kl: float
    """k3 estimate of KL(old || new) over action tokens."""
    grad_norm: float
    value_loss: float
    """Critic loss (0 without a critic)."""
    tis_weight: float
    """Mean truncated-IS weight (1 when rl.tis_cap is off)."""
    tis_clip_fraction: float
    """Fraction of action tokens whose IS weight was truncated at rl.tis_cap (0 when off)."""
    trained_samples: int
    dropped_samples: int
    """Unjudged, failed or uniform-group samples left out of the update."""
    applied_steps: int = 0
    """Optimiser steps applied (policy and critic)."""
    skipped_steps: int = 0
    """Optimiser steps skipped because their loss or gradient norm was non-finite (the
    weights left as they were); the means above are over the steps applied."""


@torch.no_grad()
def logprobs_no_grad(model: PreTrainedModel, batch: TokenBatch, temperature: float) -> torch.Tensor:
    was = model.training
    model.eval()
    try:
        return batch_logprobs(model, batch, temperature)
    finally:
        model.train(was)


def _critic_step(critic: Critic, mb: TokenBatch, idx: torch.Tensor, cfg: RLConfig,
                 micro_tokens: int) -> float:
    critic.optimizer.zero_grad(set_to_none=True)
    total = 0.0
    for piece in micro_batches(mb, micro_tokens):
        part = piece.of(mb)
        values = critic.model(part.input_ids, part.attention_mask)  # (b, l-1)
        rows = idx[piece.rows.to(idx.device)]
        width = part.loss_mask.shape[1]
        loss = clipped_value_loss(values, critic.old_values[rows, :width],
                                  critic.returns[rows, :width], part.loss_mask,
                                  cfg.value_clip, cfg.loss_agg)
        loss = loss * loss_share(part.loss_mask, mb.loss_mask, cfg.loss_agg)
        loss.backward()
        total += loss.item()
    gn = torch.nn.utils.clip_grad_norm_(critic.model.parameters(), cfg.grad_clip)
    if not (math.isfinite(total) and math.isfinite(float(gn))):
        critic.optimizer.zero_grad(set_to_none=True)
        log.warning("critic step skipped, weights unchanged: loss %s, grad norm %s",
                    total, float(gn))
        return math.nan
    critic.optimizer.step()
    return total


def _policy_step(model: PreTrainedModel, optimizer: torch.optim.Optimizer, mb: TokenBatch,
                 old_logp: torch.Tensor | None, weights: torch.Tensor | None,
                 ref_logp: torch.Tensor | None, cfg: RLConfig,
                 micro_tokens: int) -> PolicyStepStats:
    """One optimiser step on the minibatch `mb`, its gradient accumulated over
    micro-batches (tracerl.train.micro), each shared prompt run once
    (tracerl.train.accumulate); the statistics are share-weighted means.

    `old_logp` None means the proximal policy is this very pass (see `proximal_in_pass`):
    each piece's detached logprobs are the ratio's denominator, and its truncated-IS
    weights are computed from them and written into `weights` (B, T), for the statistics."""
    optimizer.zero_grad(set_to_none=True)
    in_pass = old_logp is None
    if in_pass and weights is None:
        raise ValueError("_policy_step: old_logp=None needs a weights tensor to fill")
    sums = torch.zeros(5, dtype=torch.float64)  # loss, pg, kl, clip fraction, approx kl

    def piece_loss(piece: MicroBatch, part: TokenBatch, logp: torch.Tensor) -> torch.Tensor:
        nonlocal sums
        if in_pass:
            old = logp.detach()
            w = is_weights(cfg)(old, part.old_logp, part.loss_mask, cfg.tis_cap)
            weights[piece.rows.to(weights.device), : piece.width - 1] = w  # type: ignore[index]
        else:
            old = piece.cols(old_logp)  # type: ignore[arg-type]
            w = None if weights is None else piece.cols(weights)
        pg, stats = policy_loss(cfg)(logp, old, part.advantages,
                                     part.loss_mask, clip_low=cfg.clip_low,
                                     clip_high=cfg.clip_high, agg=cfg.loss_agg, weights=w)
        kl = torch.zeros(())
        if ref_logp is not None:
            kl = aggregate(kl_estimate(logp, piece.cols(ref_logp), cfg.kl_estimator),
                           part.loss_mask, cfg.loss_agg)
        loss = pg + cfg.kl_coef * kl
        share = loss_share(part.loss_mask, mb.loss_mask, cfg.loss_agg)
        sums += share * torch.tensor([loss.item(), pg.item(), kl.item(), stats.clip_fraction,
                                      stats.approx_kl], dtype=torch.float64)
        return loss * share

    accumulate(model, mb, micro_tokens, cfg.temperature, piece_loss)
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    stats = PolicyStepStats(*sums.tolist(), grad_norm=float(gn))
    if not stats.finite:  # a NaN/inf step would poison every weight: skip it
        optimizer.zero_grad(set_to_none=True)
        log.warning("optimiser step skipped, weights unchanged: loss %s, grad norm %s",
                    stats.loss, stats.grad_norm)
        return stats
    optimizer.step()
    return stats


def proximal_in_pass(model: PreTrainedModel, cfg: RLConfig) -> bool:
    """True when the proximal policy's logprobs equal the training pass's own (detached):
    one epoch of one minibatch runs the update's only forward pass on the weights the
    proximal policy names, and without dropout that pass is deterministic. The separate
    no-grad pass is then skipped (a forward over the whole batch saved per update)."""
    if cfg.update_epochs != 1 or cfg.minibatches != 1:
        return False
    config = getattr(model, "config", None)
    rates = [getattr(config, k, 0.0) or 0.0 for k in
             ("attention_dropout", "hidden_dropout", "dropout", "resid_pdrop", "attn_pdrop")]
    return not any(rates) and not any(isinstance(m, torch.nn.Dropout) and m.p > 0
                                      for m in model.modules())


def ppo_update(model: PreTrainedModel, optimizer: torch.optim.Optimizer, batch: TokenBatch,
               cfg: RLConfig, generator: torch.Generator, dropped: int,
               ref_logp: torch.Tensor | None = None, critic: Critic | None = None,
               train_policy: bool = True, micro_tokens: int = 0) -> UpdateMetrics:
    """Update the policy (unless `train_policy` is False: critic warm-up) and the critic.

    With `rl.tis_cap` > 0 the ratio's denominator is the trainer's own logprob before
    the update (the proximal policy) and each token's loss is weighted by the truncated
    ratio p_trainer / p_sampler, per token or per sequence (`rl.tis_level`): AReaL's
    decoupled objective when the sampler is stale (async runs). Otherwise the
    denominator is the sampler's behaviour logprob (plain PPO/GRPO).
    `ref_logp` (B, T) adds the KL loss term (kl_placement=loss). Each optimiser step's
    gradient is accumulated over micro-batches of at most `micro_tokens` positions.
    """
    old_logp, weights = batch.old_logp, None
    in_pass = cfg.tis_cap > 0 and train_policy and proximal_in_pass(model, cfg)
    if cfg.tis_cap > 0 and not in_pass:
        old_logp = logprobs_no_grad(model, batch, cfg.temperature)
        weights = is_weights(cfg)(old_logp, batch.old_logp, batch.loss_mask, cfg.tis_cap)
    use_ref = ref_logp is not None and cfg.kl_placement == "loss" and cfg.kl_coef > 0
    mask = batch.loss_mask
    model.train()
    sums = torch.zeros(7, dtype=torch.float64)
    applied = torch.zeros(7, dtype=torch.float64)  # the steps each mean is over
    skipped = 0
    for _ in range(cfg.update_epochs):
        order = torch.randperm(len(batch), generator=generator)
        for chunk in order.chunk(cfg.minibatches):
            chunk = chunk.to(batch.input_ids.device)
            mb = batch.select(chunk)
            if train_policy:
                if in_pass:  # the one minibatch is the whole batch, permuted
                    weights, mask = torch.zeros_like(mb.loss_mask), mb.loss_mask
                stats = _policy_step(
                    model, optimizer, mb, None if in_pass else old_logp[chunk],
                    weights if in_pass or weights is None else weights[chunk],
                    ref_logp[chunk] if use_ref and ref_logp is not None else None, cfg,
                    micro_tokens)
                if stats.finite:
                    sums[:6] += torch.tensor(astuple(stats), dtype=torch.float64)
                    applied[:6] += 1
                else:
                    skipped += 1
            if critic is not None:
                value_loss = _critic_step(critic, mb, chunk, cfg, micro_tokens)
                if math.isfinite(value_loss):
                    sums[6] += value_loss
                    applied[6] += 1
                else:
                    skipped += 1
    avg = (sums / applied.clamp(min=1)).tolist()
    tis = None if weights is None else is_stats(weights, mask, cfg.tis_cap)
    return UpdateMetrics(*avg[:6], value_loss=avg[6],
                         tis_weight=1.0 if tis is None else tis.mean_weight,
                         tis_clip_fraction=0.0 if tis is None else tis.clip_fraction,
                         trained_samples=len(batch), dropped_samples=dropped,
                         applied_steps=int(applied[0] + applied[6]),
                         skipped_steps=skipped)

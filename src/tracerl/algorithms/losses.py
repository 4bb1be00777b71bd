"""Policy losses and loss aggregation over (B, T) token tensors.

All functions are pure: explicit tensors in, tensors out, no I/O. `mask` is 1 on the
tokens the policy sampled (the loss only ever sees those).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

LossAgg = Literal["token-mean", "seq-mean-token-mean", "seq-mean-token-sum"]


def aggregate(loss_mat: torch.Tensor, mask: torch.Tensor, mode: LossAgg,
              norm_len: float | None = None) -> torch.Tensor:
    """Reduce a (B, T) per-token loss to a scalar.

    - token-mean: sum over all valid tokens / their count (DAPO, Yu et al. 2025, sec. 3.3:
      long sequences are not down-weighted).
    - seq-mean-token-mean: mean within each sequence, then over sequences (GRPO paper).
    - seq-mean-token-sum: sum within each sequence, then mean over sequences; with
      `norm_len` the sums are divided by that constant (Dr.GRPO's fixed normaliser).
    Sequences with no valid token are left out of the sequence means.
    """
    mask = mask.to(loss_mat.dtype)
    if mode == "token-mean":
        return (loss_mat * mask).sum() / mask.sum().clamp(min=1.0)
    per_seq_tokens = mask.sum(-1)  # (B,)
    has_tokens = (per_seq_tokens > 0).to(loss_mat.dtype)  # (B,)
    seq_sum = (loss_mat * mask).sum(-1)  # (B,)
    if mode == "seq-mean-token-mean":
        seq = seq_sum / per_seq_tokens.clamp(min=1.0)  # (B,)
    elif mode == "seq-mean-token-sum":
        seq = seq_sum / norm_len if norm_len else seq_sum  # (B,)
    else:
        raise ValueError(f"unknown loss aggregation {mode!r}; expected one of {LossAgg}")
    return (seq * has_tokens).sum() / has_tokens.sum().clamp(min=1.0)


@dataclass(frozen=True)
class PolicyLossStats:
    clip_fraction: float
    approx_kl: float
    ratio_mean: float


def clipped_policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                        mask: torch.Tensor, clip_low: float = 0.2, clip_high: float = 0.2,
                        agg: LossAgg = "token-mean") -> tuple[torch.Tensor, PolicyLossStats]:
    """PPO's clipped surrogate (Schulman et al. 2017, eq. 7), with separate clip bounds.

    ratio = exp(logp - old_logp), clipped to [1 - clip_low, 1 + clip_high]. A larger
    `clip_high` is DAPO's clip-higher (Yu et al. 2025, sec. 3.1: 0.2 / 0.28), which
    lets unlikely tokens with positive advantage grow and so keeps entropy up.

    Args:
        logp, old_logp, advantages, mask: (B, T).
    Returns:
        (scalar loss to minimise, stats).
    """
    log_ratio = logp - old_logp  # (B, T)
    ratio = torch.exp(log_ratio)  # (B, T)
    pg_loss1 = -advantages * ratio  # (B, T)
    pg_loss2 = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)  # (B, T)
    pg_loss = torch.maximum(pg_loss1, pg_loss2)  # (B, T)
    loss = aggregate(pg_loss, mask, agg)
    with torch.no_grad():
        m = mask.to(logp.dtype)
        n = m.sum().clamp(min=1.0)
        clipped = ((pg_loss2 > pg_loss1).to(logp.dtype) * m).sum() / n
        approx_kl = (((ratio - 1) - log_ratio) * m).sum() / n  # k3, Schulman 2020
        stats = PolicyLossStats(float(clipped), float(approx_kl), float((ratio * m).sum() / n))
    return loss, stats


def sft_loss(logp: torch.Tensor, mask: torch.Tensor, agg: LossAgg = "token-mean") -> torch.Tensor:
    """Negative log-likelihood of the masked (assistant) tokens."""
    return aggregate(-logp, mask, agg)

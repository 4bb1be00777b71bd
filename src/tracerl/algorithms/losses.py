"""Policy losses and loss aggregation over (B, T) token tensors.

All functions are pure: explicit tensors in, tensors out, no I/O. `mask` is 1 on the
tokens the policy sampled (the loss only ever sees those).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from tracerl.algorithms.names import LossAgg


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


def loss_share(part: torch.Tensor, whole: torch.Tensor, mode: LossAgg) -> float:
    """The weight of `aggregate` over the rows `part` (b, T) of a batch whose mask is
    `whole` (B, T), such that the whole batch's aggregate is the sum over a partition of
    its rows of share * aggregate(part): the part's share of the valid tokens
    (token-mean) or of the sequences with a valid token (the sequence means).
    Gradient accumulation over micro-batches uses it to reproduce the whole-batch loss."""
    if mode == "token-mean":
        return float(part.sum() / whole.sum().clamp(min=1.0))
    if mode not in ("seq-mean-token-mean", "seq-mean-token-sum"):
        raise ValueError(f"unknown loss aggregation {mode!r}; expected one of {LossAgg}")
    return float((part.sum(-1) > 0).sum() / (whole.sum(-1) > 0).sum().clamp(min=1))


@dataclass(frozen=True)
class PolicyLossStats:
    clip_fraction: float
    approx_kl: float
    ratio_mean: float


def clipped_policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                        mask: torch.Tensor, clip_low: float = 0.2, clip_high: float = 0.2,
                        agg: LossAgg = "token-mean", dual_clip: float | None = None,
                        weights: torch.Tensor | None = None
                        ) -> tuple[torch.Tensor, PolicyLossStats]:
    """PPO's clipped surrogate (Schulman et al. 2017, eq. 7), with separate clip bounds.

    ratio = exp(logp - old_logp), clipped to [1 - clip_low, 1 + clip_high]. A larger
    `clip_high` is DAPO's clip-higher (Yu et al. 2025, sec. 3.1: 0.2 / 0.28), which
    lets unlikely tokens with positive advantage grow and so keeps entropy up.
    `dual_clip` (c > 1; Ye et al. 2020, "Mastering Complex Control in MOBA Games",
    sec. 4.2) also caps the loss of negative-advantage tokens at -c * A, so a huge ratio
    on a bad token cannot dominate the update. `weights` multiplies the per-token loss
    (truncated importance-sampling weights, see `truncated_is_weights`).

    Args:
        logp, old_logp, advantages, mask: (B, T); weights: (B, T) or None.
    Returns:
        (scalar loss to minimise, stats).
    """
    log_ratio = logp - old_logp  # (B, T)
    ratio = torch.exp(log_ratio)  # (B, T)
    pg_loss1 = -advantages * ratio  # (B, T)
    pg_loss2 = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)  # (B, T)
    pg_loss = torch.maximum(pg_loss1, pg_loss2)  # (B, T)
    if dual_clip is not None:
        if dual_clip <= 1.0:
            raise ValueError(f"dual_clip must be > 1, got {dual_clip}")
        capped = torch.minimum(pg_loss, -advantages * dual_clip)  # (B, T)
        pg_loss = torch.where(advantages < 0, capped, pg_loss)
    if weights is not None:
        pg_loss = pg_loss * weights
    loss = aggregate(pg_loss, mask, agg)
    return loss, _stats(ratio, log_ratio, pg_loss2 > pg_loss1, mask)


def _stats(ratio: torch.Tensor, log_ratio: torch.Tensor, clipped: torch.Tensor,
           mask: torch.Tensor) -> PolicyLossStats:
    with torch.no_grad():
        m = mask.to(ratio.dtype)
        n = m.sum().clamp(min=1.0)
        frac = (clipped.to(ratio.dtype) * m).sum() / n
        approx_kl = (((ratio - 1) - log_ratio) * m).sum() / n  # k3, Schulman 2020
        return PolicyLossStats(float(frac), float(approx_kl), float((ratio * m).sum() / n))


def gspo_policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                     mask: torch.Tensor, clip_low: float = 3e-4, clip_high: float = 4e-4,
                     agg: LossAgg = "seq-mean-token-mean",
                     weights: torch.Tensor | None = None) -> tuple[torch.Tensor, PolicyLossStats]:
    """GSPO: one importance ratio per sequence (Zheng et al. 2025, "Group Sequence Policy
    Optimization", eq. 7 and the token-level form GSPO-token, eq. 13).

    s_i = exp(mean_t (logp - old_logp)) over sequence i's action tokens, the length-
    normalised sequence likelihood ratio; per token s_i,t = sg(s_i) * p / sg(p), whose
    value is s_i and whose gradient flows through each token's logp. Clipping acts on
    whole sequences, so the clip ranges are far smaller than PPO's (paper: 3e-4 / 4e-4).

    Args:
        logp, old_logp, advantages, mask: (B, T); weights: (B, T) or None.
    """
    m = mask.to(logp.dtype)
    log_ratio = (logp - old_logp) * m  # (B, T)
    seq_log_ratio = log_ratio.sum(-1) / m.sum(-1).clamp(min=1.0)  # (B,)
    token_log_ratio = seq_log_ratio.detach()[:, None] + logp - logp.detach()  # (B, T)
    ratio = torch.exp(token_log_ratio)  # (B, T)
    pg_loss1 = -advantages * ratio  # (B, T)
    pg_loss2 = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)  # (B, T)
    pg_loss = torch.maximum(pg_loss1, pg_loss2)  # (B, T)
    if weights is not None:
        pg_loss = pg_loss * weights
    loss = aggregate(pg_loss, mask, agg)
    return loss, _stats(ratio, token_log_ratio, pg_loss2 > pg_loss1, mask)


def cispo_policy_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                      mask: torch.Tensor, clip_low: float | None = None, clip_high: float = 0.28,
                      agg: LossAgg = "token-mean",
                      weights: torch.Tensor | None = None) -> tuple[torch.Tensor, PolicyLossStats]:
    """CISPO (MiniMax 2025, "MiniMax-M1", sec. 3.1): clip the importance weight, not the update.

    loss_t = -sg(clip(ratio_t, 1 - clip_low, 1 + clip_high)) * A_t * logp_t. Unlike PPO,
    a token whose ratio leaves the clip range still contributes its gradient (through
    logp), only with a bounded weight; MiniMax sets no lower bound (clip_low None).

    Args:
        logp, old_logp, advantages, mask: (B, T); weights: (B, T) or None.
    """
    log_ratio = logp - old_logp  # (B, T)
    ratio = torch.exp(log_ratio)  # (B, T)
    low = 0.0 if clip_low is None else 1.0 - clip_low
    is_weight = torch.clamp(ratio, low, 1.0 + clip_high).detach()  # (B, T)
    pg_loss = -is_weight * advantages * logp  # (B, T)
    if weights is not None:
        pg_loss = pg_loss * weights
    loss = aggregate(pg_loss, mask, agg)
    clipped = (ratio > 1.0 + clip_high) | (ratio < low)
    return loss, _stats(ratio, log_ratio, clipped, mask)


def truncated_is_weights(train_logp: torch.Tensor, behaviour_logp: torch.Tensor,
                         cap: float) -> torch.Tensor:
    """Truncated importance sampling for sampler/trainer mismatch (Yao et al. 2025, "Your
    Efficient RL Framework Secretly Brings You Off-Policy RL Training").

    The sampler's probabilities differ from the trainer's (kernels, precision, a stale
    policy); w_t = min(p_train / p_sampler, cap) reweights each token's loss towards the
    trainer's distribution, truncated for bounded variance. No gradient flows through w.

    Args:
        train_logp: (B, T) the trainer's logprobs of the sampled tokens before the update.
        behaviour_logp: (B, T) the sampler's logprobs of the same tokens.
    Returns:
        (B, T) weights in (0, cap].
    """
    if cap <= 0:
        raise ValueError(f"truncated IS cap must be > 0, got {cap}")
    return torch.exp(train_logp - behaviour_logp).clamp(max=cap).detach()


def sequence_truncated_is_weights(train_logp: torch.Tensor, behaviour_logp: torch.Tensor,
                                  mask: torch.Tensor, cap: float) -> torch.Tensor:
    """Sequence-level truncated importance sampling: one weight per trajectory.

    w_i = min(prod_t p_train / p_behaviour, cap) over sequence i's action tokens, the
    likelihood ratio of the whole sampled response (the estimator that is unbiased for
    sequence-level rewards before truncation; Yao et al. 2025, and the "seq" mode of
    verl's rollout correction). It is far more extreme than the token weights (a product
    of hundreds of ratios), so the cap matters more; every token of sequence i gets w_i.

    Args:
        train_logp, behaviour_logp, mask: (B, T).
    Returns:
        (B, T) weights in (0, cap], constant along each row.
    """
    if cap <= 0:
        raise ValueError(f"truncated IS cap must be > 0, got {cap}")
    m = mask.to(train_logp.dtype)
    log_w = ((train_logp - behaviour_logp) * m).sum(-1)  # (B,)
    w = torch.exp(log_w.clamp(max=math.log(cap)))  # (B,)
    return w[:, None].expand_as(train_logp).detach()  # (B, T)


@dataclass(frozen=True)
class ISStats:
    """What a truncated importance-sampling correction did, over action tokens."""

    mean_weight: float
    clip_fraction: float
    """Fraction of action tokens whose weight was truncated at the cap."""


def is_stats(weights: torch.Tensor, mask: torch.Tensor, cap: float) -> ISStats:
    """Mean weight and truncated fraction of (B, T) IS weights over the masked tokens."""
    with torch.no_grad():
        m = mask.to(weights.dtype)
        n = m.sum().clamp(min=1.0)
        clipped = (weights >= cap * (1 - 1e-6)).to(weights.dtype)  # (B, T)
        return ISStats(float((weights * m).sum() / n), float((clipped * m).sum() / n))


def clipped_value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor,
                       mask: torch.Tensor, clip: float | None = 0.2,
                       agg: LossAgg = "token-mean") -> torch.Tensor:
    """PPO's value loss with value clipping (as in OpenAI baselines' PPO2 and CleanRL).

    0.5 * max((V - R)^2, (V_clipped - R)^2), V_clipped = old_V + clamp(V - old_V, -c, c):
    the critic cannot move further than `clip` from the values used for the advantages
    in one update. `clip=None` is the plain squared error.

    Args:
        values, old_values, returns, mask: (B, T).
    """
    err = (values - returns).pow(2)  # (B, T)
    if clip is not None:
        clipped = old_values + torch.clamp(values - old_values, -clip, clip)  # (B, T)
        err = torch.maximum(err, (clipped - returns).pow(2))
    return 0.5 * aggregate(err, mask, agg)


def sft_loss(logp: torch.Tensor, mask: torch.Tensor, agg: LossAgg = "token-mean") -> torch.Tensor:
    """Negative log-likelihood of the masked (assistant) tokens."""
    return aggregate(-logp, mask, agg)


@dataclass(frozen=True)
class DPOStats:
    reward_accuracy: float
    """Fraction of pairs whose implicit reward ranks chosen above rejected."""
    margin: float
    """Mean implicit-reward margin (chosen minus rejected)."""


def dpo_loss(chosen_logp: torch.Tensor, rejected_logp: torch.Tensor,
             ref_chosen_logp: torch.Tensor, ref_rejected_logp: torch.Tensor,
             beta: float = 0.1) -> tuple[torch.Tensor, DPOStats]:
    """Direct Preference Optimization (Rafailov et al. 2023, eq. 7).

    -log sigmoid(beta * [(log pi(y_w) - log ref(y_w)) - (log pi(y_l) - log ref(y_l))]).
    Inputs are sequence log-likelihoods summed over action tokens only (multi-turn: tool
    observations are the env's words, not the policy's, so they carry no preference).

    Args:
        all four: (P,) one per preference pair.
    """
    chosen_reward = beta * (chosen_logp - ref_chosen_logp)  # (P,)
    rejected_reward = beta * (rejected_logp - ref_rejected_logp)  # (P,)
    margin = chosen_reward - rejected_reward  # (P,)
    loss = -torch.nn.functional.logsigmoid(margin).mean()
    with torch.no_grad():
        stats = DPOStats(float((margin > 0).float().mean()), float(margin.mean()))
    return loss, stats

"""KL estimators between the policy and a frozen reference, per token.

Schulman (2020), "Approximating KL Divergence": with r = p_ref / p evaluated at tokens
sampled from p (so log r = ref_logp - logp),
    k1 = -log r            unbiased, high variance, can be negative
    k2 = (log r)^2 / 2     biased, low variance
    k3 = (r - 1) - log r   unbiased, low variance, always >= 0 (GRPO's choice)
"""

from __future__ import annotations

import torch

from tracerl.algorithms.names import KLEstimator


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor,
                estimator: KLEstimator = "k3") -> torch.Tensor:
    """Per-token estimate of KL(p || p_ref). Shapes: (B, T) -> (B, T)."""
    log_r = ref_logp - logp  # (B, T)
    if estimator == "k1":
        return -log_r
    if estimator == "k2":
        return 0.5 * log_r.pow(2)
    if estimator == "k3":
        # clamp as verl does: exp of a large log-ratio would overflow the gradient
        log_r = log_r.clamp(-20.0, 20.0)
        return torch.exp(log_r) - 1.0 - log_r
    raise ValueError(f"unknown KL estimator {estimator!r}; expected k1, k2 or k3")


def kl_in_reward(token_rewards: torch.Tensor, kl: torch.Tensor, coef: float,
                 mask: torch.Tensor) -> torch.Tensor:
    """Place the KL penalty in the reward (as InstructGPT/PPO-RLHF and REINFORCE++ do).

    r'_t = r_t - coef * KL_t on action tokens; the penalty then flows through the
    returns (and the critic) instead of being a separate loss term. Shapes: (B, T).
    """
    return token_rewards - coef * kl.detach() * mask.to(kl.dtype)

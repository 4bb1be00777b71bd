"""Advantage estimators: outcome rewards of a group -> one advantage per trajectory.

Inputs are (num_groups, G) reward tensors where NaN marks a reward that could not be
judged (None): it is excluded from the baseline and its advantage is 0, and the trainer
also masks that sample out of the loss.
"""

from __future__ import annotations

import torch


def _nan_mean(x: torch.Tensor, dim: int) -> torch.Tensor:
    valid = ~torch.isnan(x)
    total = torch.where(valid, x, torch.zeros_like(x)).sum(dim, keepdim=True)
    count = valid.sum(dim, keepdim=True).clamp(min=1)
    return total / count


def grpo_advantages(rewards: torch.Tensor, std_normalize: bool = True,
                    eps: float = 1e-6) -> torch.Tensor:
    """GRPO group-relative advantages (Shao et al. 2024, DeepSeekMath, eq. 3).

    A_i = (r_i - mean(r)) / (std(r) + eps) within each group. With
    `std_normalize=False` this is Dr.GRPO's unscaled version (Liu et al. 2025,
    "Understanding R1-Zero-Like Training"), which avoids up-weighting groups whose
    rewards barely differ. std is the population std (divide by G), as in DeepSeekMath.

    Args:
        rewards: (num_groups, G), NaN where the reward could not be judged.
    Returns:
        (num_groups, G) advantages, 0 where the reward is NaN.
    """
    valid = ~torch.isnan(rewards)  # (N, G)
    mean = _nan_mean(rewards, dim=1)  # (N, 1)
    centered = torch.where(valid, rewards - mean, torch.zeros_like(rewards))  # (N, G)
    if not std_normalize:
        return centered
    count = valid.sum(1, keepdim=True).clamp(min=1)  # (N, 1)
    std = (centered.pow(2).sum(1, keepdim=True) / count).sqrt()  # (N, 1)
    return centered / (std + eps)


def broadcast_to_tokens(advantages: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Trajectory-level credit: every action token gets its trajectory's advantage.

    Args:
        advantages: (B,) one per trajectory.
        mask: (B, T) 1 on action tokens.
    Returns:
        (B, T) token advantages, 0 off the mask.
    """
    return advantages[:, None] * mask.to(advantages.dtype)  # (B, T)


def rloo_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """REINFORCE leave-one-out (Kool et al. 2019; Ahmadian et al. 2024, "Back to Basics").

    A_i = r_i - mean_{j != i}(r_j): each sample's baseline is the mean of the others, so
    it is independent of the sample and the estimate stays unbiased. Equals
    G/(G-1) * (r_i - mean(r)). A group with a single judged sample gets 0.

    Args:
        rewards: (num_groups, G), NaN where the reward could not be judged.
    Returns:
        (num_groups, G) advantages, 0 where the reward is NaN.
    """
    valid = ~torch.isnan(rewards)  # (N, G)
    filled = torch.where(valid, rewards, torch.zeros_like(rewards))  # (N, G)
    count = valid.sum(1, keepdim=True)  # (N, 1)
    others = (filled.sum(1, keepdim=True) - filled) / (count - 1).clamp(min=1)  # (N, G)
    usable = valid & (count > 1)  # (N, G)
    return torch.where(usable, filled - others, torch.zeros_like(rewards))


def discounted_returns(token_rewards: torch.Tensor, mask: torch.Tensor,
                       gamma: float = 1.0) -> torch.Tensor:
    """G_t = sum_{s >= t} gamma^(s - t) r_s over action tokens only.

    Observation tokens (mask 0) are not time steps: they neither discount nor carry
    reward, so a multi-turn trajectory discounts per sampled token.

    Args:
        token_rewards, mask: (B, T).
    Returns:
        (B, T) returns, 0 off the mask.
    """
    m = mask.to(token_rewards.dtype)
    out = torch.zeros_like(token_rewards)  # (B, T)
    running = torch.zeros_like(token_rewards[:, 0])  # (B,)
    for t in range(token_rewards.shape[1] - 1, -1, -1):
        step = token_rewards[:, t] + gamma * running  # (B,)
        running = m[:, t] * step + (1 - m[:, t]) * running
        out[:, t] = running * m[:, t]
    return out


def masked_whiten(x: torch.Tensor, mask: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """(x - mean) / (std + eps) with mean and population std over masked entries."""
    m = mask.to(x.dtype)
    n = m.sum().clamp(min=1.0)
    mean = (x * m).sum() / n
    std = (((x - mean) * m).pow(2).sum() / n).sqrt()
    return (x - mean) / (std + eps) * m


def reinforce_pp_advantages(token_rewards: torch.Tensor, mask: torch.Tensor,
                            gamma: float = 1.0) -> torch.Tensor:
    """REINFORCE++ (Hu 2025, "REINFORCE++: a simple and efficient approach").

    Token returns (outcome at the last action token, optionally minus a per-token KL
    penalty placed in the reward) whitened over every action token of the *batch*
    (global normalisation instead of per-group). For the "-baseline" variant, subtract
    the group mean from the outcome before building `token_rewards`.

    Args:
        token_rewards, mask: (B, T).
    Returns:
        (B, T) advantages, 0 off the mask.
    """
    return masked_whiten(discounted_returns(token_rewards, mask, gamma), mask)


def outcome_token_rewards(outcomes: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Place each trajectory's outcome on its last action token; (B,), (B, T) -> (B, T)."""
    m = mask.to(outcomes.dtype)
    positions = torch.arange(m.shape[1], dtype=outcomes.dtype)  # (T,)
    last = (m * (positions + 1)).argmax(dim=1)  # (B,) index of the last action token
    out = torch.zeros_like(m)  # (B, T)
    has = m.sum(1) > 0  # (B,)
    out[torch.arange(m.shape[0])[has], last[has]] = outcomes[has]
    return out

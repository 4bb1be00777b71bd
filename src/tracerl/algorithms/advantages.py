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

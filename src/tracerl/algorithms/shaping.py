"""Reward shaping that depends on the trajectory, not the task: DAPO's overlong penalty."""

from __future__ import annotations

import torch


def overlong_penalty(lengths: torch.Tensor, max_len: int, cache_len: int) -> torch.Tensor:
    """DAPO soft overlong punishment (Yu et al. 2025, eq. 13), added to the reward.

    0 while length <= max_len - cache_len; then falls linearly to -1 at max_len; -1
    beyond. Responses that ran into the limit are usually cut-off rambling; a smooth
    penalty tells the policy so without the noise of scoring them like wrong answers.

    Args:
        lengths: (B,) response lengths in tokens.
    Returns:
        (B,) penalties in [-1, 0].
    """
    if not 0 < cache_len <= max_len:
        raise ValueError(f"overlong cache_len must be in (0, max_len={max_len}], got {cache_len}")
    start = max_len - cache_len
    over = (lengths.to(torch.float32) - start) / cache_len  # (B,)
    return -over.clamp(min=0.0, max=1.0)

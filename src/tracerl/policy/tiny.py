"""The size of the built-in tiny policy, as a config section (no torch needed)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TinySpec:
    """Size of the built-in tiny policy."""

    hidden_size: int = 192
    """Width of the residual stream."""
    layers: int = 2
    """Transformer blocks (2 learn to copy operands faster than 4 at this size)."""
    heads: int = 6
    """Attention heads (hidden_size must divide by it)."""
    intermediate_size: int = 576
    """Width of the SwiGLU feed-forward layer."""
    max_positions: int = 1024
    """Longest sequence (prompt + response) the model accepts."""

    def __post_init__(self) -> None:
        if self.hidden_size % self.heads:
            raise ValueError(
                f"hidden_size {self.hidden_size} is not divisible by heads {self.heads}")

"""The rollout runner's settings: group size, episode budgets and sampling.

These are also the first knobs of the `rl` config section (RLConfig extends this class),
so they are declared once. No torch needed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class RolloutConfig:
    group_size: int = 8
    """Samples per task (G), the group of the group baseline."""
    max_turns: int = 8
    """Policy turns before a trajectory is truncated."""
    max_turn_tokens: int = 96
    """Tokens sampled per turn at most."""
    max_response_tokens: int = 512
    """Response tokens (actions + observations) per trajectory at most."""
    temperature: float = 1.0
    """Sampling temperature of rollouts (0 = greedy)."""
    top_p: float = 1.0
    """Nucleus sampling of rollouts."""

    @classmethod
    def of(cls, config: RolloutConfig) -> RolloutConfig:
        """Just the rollout settings of `config` (an RLConfig carries more)."""
        if type(config) is cls:
            return config
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})

    def __post_init__(self) -> None:
        if self.group_size < 1:
            raise ValueError(f"group_size must be >= 1, got {self.group_size}")
        if self.max_turns < 1 or self.max_turn_tokens < 1 or self.max_response_tokens < 1:
            raise ValueError("max_turns, max_turn_tokens and max_response_tokens must be >= 1")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")

"""Verifiable rewards: programmatic checks, composition and audits."""

from tracerl.rewards.base import Reward, RewardResult

__all__ = ["Reward", "RewardResult"]

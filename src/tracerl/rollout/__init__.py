"""Multi-turn rollouts: the asyncio runner and token-in, token-out rendering."""

from tracerl.rollout.render import ChatRenderer, TemplateMismatchError
from tracerl.rollout.runner import RolloutConfig, RolloutRunner, RolloutStats

__all__ = ["ChatRenderer", "RolloutConfig", "RolloutRunner", "RolloutStats",
           "TemplateMismatchError"]

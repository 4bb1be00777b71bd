"""Multi-turn rollouts: the asyncio runner and token-in, token-out rendering.

Names are imported on first use: `tracerl.rollout.config` needs no torch.
"""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "ChatRenderer": "tracerl.rollout.render",
    "TemplateMismatchError": "tracerl.rollout.render",
    "RolloutConfig": "tracerl.rollout.config",
    "RolloutRunner": "tracerl.rollout.runner",
    "RolloutStats": "tracerl.rollout.runner",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

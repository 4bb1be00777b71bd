"""Pure algorithm functions: advantage estimators, policy losses, KL estimators.

Names are imported on first use: `tracerl.algorithms.names` (the method names the
config accepts) needs no torch.
"""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "broadcast_to_tokens": "tracerl.algorithms.advantages",
    "grpo_advantages": "tracerl.algorithms.advantages",
    "kl_estimate": "tracerl.algorithms.kl",
    "aggregate": "tracerl.algorithms.losses",
    "clipped_policy_loss": "tracerl.algorithms.losses",
    "sft_loss": "tracerl.algorithms.losses",
    "KLEstimator": "tracerl.algorithms.names",
    "LossAgg": "tracerl.algorithms.names",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

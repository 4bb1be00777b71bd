"""Pure algorithm functions: advantage estimators, policy losses, KL estimators."""

from tracerl.algorithms.advantages import broadcast_to_tokens, grpo_advantages
from tracerl.algorithms.kl import KLEstimator, kl_estimate
from tracerl.algorithms.losses import LossAgg, aggregate, clipped_policy_loss, sft_loss

__all__ = ["KLEstimator", "LossAgg", "aggregate", "broadcast_to_tokens", "clipped_policy_loss",
           "grpo_advantages", "kl_estimate", "sft_loss"]

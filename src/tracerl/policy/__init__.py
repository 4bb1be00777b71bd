"""Policies (transformers causal LMs + tokenizer) and samplers.

Names are imported on first use: `tracerl.policy.sampling` and `tracerl.policy.tiny`
need no torch.
"""

from tracerl.util.lazy import lazy_exports

_EXPORTS = {
    "Policy": "tracerl.policy.model",
    "load_policy": "tracerl.policy.model",
    "policy_from_model": "tracerl.policy.model",
    "write_tiny": "tracerl.policy.model",
    "TinySpec": "tracerl.policy.tiny",
    "Sample": "tracerl.policy.sampling",
    "Sampler": "tracerl.policy.sampling",
    "SamplingParams": "tracerl.policy.sampling",
    "TransformersSampler": "tracerl.policy.sampler",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

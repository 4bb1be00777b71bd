"""Policies (transformers causal LMs + tokenizer) and samplers."""

from tracerl.policy.model import Policy, TinySpec, load_policy, write_tiny
from tracerl.policy.sampler import Sample, SamplingParams, TransformersSampler

__all__ = [
    "Policy",
    "Sample",
    "SamplingParams",
    "TinySpec",
    "TransformersSampler",
    "load_policy",
    "write_tiny",
]

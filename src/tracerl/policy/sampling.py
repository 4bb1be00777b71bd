"""The Sampler protocol: what the rollout runner needs from a generation backend.

A Sampler continues token-id contexts and returns the sampled ids with the
log-probability of each under the distribution it was drawn from. The transformers
sampler (tracerl.policy.sampler) is one implementation; engines that serve the policy
elsewhere (vLLM, a remote server) are others. Nothing here imports torch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0
    """0 means greedy decoding."""
    top_p: float = 1.0
    max_new_tokens: int = 128
    stop_ids: tuple[int, ...] = ()
    """A sampled id in this set ends the turn (the fast path for one-token stops)."""
    stop_strings: tuple[str, ...] = ()
    """The turn ends once its decoded text contains one of these, however the model
    tokenised it (`</tool_call>` is one token in some vocabularies, five in SmolLM2's)."""

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")


@dataclass
class Sample:
    ids: list[int]
    """The sampled token ids; a turn that stopped ends with its stop id or with the token
    that completed a stop string (which may carry text past the stop string)."""
    logprobs: list[float]
    """Behaviour log-probability of each sampled id (logits / temperature, before top-p)."""
    finish: Literal["stop", "length"]
    entropy: float | None = None
    """Summed entropy (nats) of the distributions its tokens were drawn from, when the
    backend reports it (the transformers sampler does)."""


@runtime_checkable
class Sampler(Protocol):
    """A generation backend the rollout runner can drive."""

    def generate(self, contexts: list[list[int]], params: SamplingParams,
                 budgets: list[int] | None = None) -> list[Sample]:
        """Continue every context until a stop id, a completed stop string or its own
        token budget (`budgets[i]`, default `params.max_new_tokens`); one Sample per
        context, in order."""
        ...


@runtime_checkable
class KeepsContexts(Protocol):
    """A Sampler that keeps what it prefilled for the calls that follow (the
    transformers sampler's prefix store). The rollout runner releases it when a batch's
    episodes are over: their contexts will not come back, and the memory is the update's."""

    def release_contexts(self) -> None:
        ...


@runtime_checkable
class WeightSync(Protocol):
    """A Sampler whose weights the learner replaces after each update (async training).

    The learner sends `(name, tensor)` pairs named as its model's `named_parameters()`
    (only the trained ones: with LoRA, the adapter). The call comes between two
    `generate` calls, never during one, so an episode in flight simply samples its next
    turn with the new weights. An engine that holds the policy elsewhere (vLLM, a server)
    implements it by loading the tensors into its own copy (vLLM: `model.load_weights`).
    """

    def load_weights(self, weights: Iterable[tuple[str, Any]]) -> None:
        """Copy the named tensors into the sampler's model (unknown names are an error)."""
        ...

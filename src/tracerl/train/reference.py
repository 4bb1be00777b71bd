"""The frozen reference policy of the KL term (RL) and of DPO, and its log-probabilities.

With a LoRA adapter on the policy the reference is the policy itself with the adapter
disabled: the base weights are frozen, so that *is* the policy at the start of the stage
(tracerl.policy.lora folds the adapter into the base at each stage boundary), and no
second copy of the weights is held. Without an adapter it is a frozen copy.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator

import torch

from tracerl.policy.lora import has_adapter
from tracerl.train.batch import TokenBatch, batch_logprobs, token_logprobs


class Reference:
    """Log-probabilities under the reference policy (no gradient, eval mode)."""

    def __init__(self, model: torch.nn.Module, adapter_disabled: bool = False) -> None:
        """`model` is a separate reference model (frozen here), or with `adapter_disabled`
        the LoRA policy itself."""
        self.model = model
        self.adapter_disabled = adapter_disabled
        if not adapter_disabled:
            model.eval().requires_grad_(False)

    @classmethod
    def of(cls, model: torch.nn.Module) -> Reference:
        """The reference for `model` as it is now: its disabled adapter, or a frozen copy."""
        if has_adapter(model):
            return cls(model, adapter_disabled=True)
        return cls(copy.deepcopy(model))

    @torch.no_grad()
    def logprobs(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                 temperature: float = 1.0) -> torch.Tensor:
        """log p_ref(token j+1 | tokens <= j); (B, L) -> (B, L-1)."""
        with self._as_reference() as model:
            return token_logprobs(model, input_ids, attention_mask, temperature)

    @torch.no_grad()
    def batch_logprobs(self, batch: TokenBatch, temperature: float = 1.0) -> torch.Tensor:
        """log p_ref on a batch's action tokens (0 elsewhere), as `batch_logprobs`."""
        with self._as_reference() as model:
            return batch_logprobs(model, batch, temperature)

    @contextlib.contextmanager
    def _as_reference(self) -> Iterator[torch.nn.Module]:
        model = self.model
        was = model.training
        model.eval()
        off = model.disable_adapter() if self.adapter_disabled else contextlib.nullcontext()
        try:
            with off:
                yield model
        finally:
            model.train(was)

"""Batched token sampling with a KV cache, for the transformers backend.

Contexts of different lengths are left-padded into one batch and prefilled together;
decoding then feeds one token per live row. Rows that finish (a stop token or their
own token budget) are dropped from the batch and the cache, so short turns do not pay
for long ones. The log-probability recorded for each sampled token is under the
distribution it was sampled from (logits / temperature, before top-p truncation),
which is what the trainer recomputes (behaviour logprobs for importance ratios).
"""

from __future__ import annotations

import inspect

import torch
from transformers import DynamicCache, PreTrainedModel

from tracerl.policy.sampling import Sample, SamplingParams


def _choose(logits: torch.Tensor, p: SamplingParams,
            gen: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Pick one token per row; return (tokens (B,), their logprobs (B,))."""
    logits = logits.float()
    if p.temperature == 0:
        logp = torch.log_softmax(logits, dim=-1)  # (B, V)
        tokens = logits.argmax(dim=-1)  # (B,)
        return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1)
    logp = torch.log_softmax(logits / p.temperature, dim=-1)  # (B, V)
    probs = logp.exp()
    if p.top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        cum = sorted_p.cumsum(dim=-1)
        keep = (cum - sorted_p) < p.top_p  # always keeps the most likely token
        sorted_p = sorted_p * keep
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
    tokens = torch.multinomial(probs, 1, generator=gen).squeeze(-1)  # (B,)
    return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1)


def _left_pad(contexts: list[list[int]], pad_id: int, device: torch.device
              ) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(c) for c in contexts)
    ids = torch.full((len(contexts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(contexts), width), dtype=torch.long)
    for i, c in enumerate(contexts):
        ids[i, width - len(c):] = torch.tensor(c, dtype=torch.long)
        mask[i, width - len(c):] = 1
    return ids.to(device), mask.to(device)


def cache_kwarg(model: PreTrainedModel) -> str:
    """transformers >= 5.x names the KV-cache argument `cache`; older ones `past_key_values`.
    A peft (LoRA) model passes keyword arguments through to its base, which decides."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    params = inspect.signature(base.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


class TransformersSampler:
    """The Sampler for a transformers causal LM (tracerl.policy.sampling.Sampler)."""

    def __init__(self, model: PreTrainedModel, pad_id: int, seed: int | None = None) -> None:
        self.model = model
        self.pad_id = pad_id
        self.cache_arg = cache_kwarg(model)
        self.generator: torch.Generator | None = None
        if seed is not None:
            self.generator = torch.Generator().manual_seed(seed)

    @torch.no_grad()
    def generate(self, contexts: list[list[int]], params: SamplingParams,
                 budgets: list[int] | None = None) -> list[Sample]:
        """Continue each context until a stop id or its budget (default max_new_tokens)."""
        if not contexts:
            return []
        if any(not c for c in contexts):
            raise ValueError("every context needs at least one token")
        budgets = budgets or [params.max_new_tokens] * len(contexts)
        device = next(self.model.parameters()).device
        was_training = self.model.training
        self.model.eval()
        try:
            return self._decode(contexts, params, budgets, device)
        finally:
            self.model.train(was_training)

    def _decode(self, contexts: list[list[int]], params: SamplingParams, budgets: list[int],
                device: torch.device) -> list[Sample]:
        ids, mask = _left_pad(contexts, self.pad_id, device)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)  # (B, T)
        cache = DynamicCache()
        out = self.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                         use_cache=True, **{self.cache_arg: cache})
        logits = out.logits[:, -1]  # (B, V)
        samples = [Sample([], [], "length") for _ in contexts]
        live = list(range(len(contexts)))  # row r of the batch is sample live[r]
        pos = positions[:, -1:]  # (B, 1)
        while live:
            tokens, logps = _choose(logits, params, self.generator)
            keep: list[int] = []
            for r, (tok, lp) in enumerate(zip(tokens.tolist(), logps.tolist(), strict=True)):
                s = samples[live[r]]
                s.ids.append(tok)
                s.logprobs.append(lp)
                if tok in params.stop_ids:
                    s.finish = "stop"
                elif len(s.ids) < budgets[live[r]]:
                    keep.append(r)
            if not keep:
                break
            if len(keep) < len(live):
                idx = torch.tensor(keep, device=device)
                cache.batch_select_indices(idx)
                tokens, mask, pos = tokens[idx], mask[idx], pos[idx]
                live = [live[r] for r in keep]
            mask = torch.cat([mask, mask.new_ones((len(live), 1))], dim=1)  # (B, T+1)
            pos = pos + 1
            out = self.model(input_ids=tokens[:, None], attention_mask=mask, position_ids=pos,
                             use_cache=True, **{self.cache_arg: cache})
            logits = out.logits[:, -1]
        return samples

"""Trajectories -> padded tensors, and the per-token log-probabilities of a model.

Tensors are aligned on *predicted* positions: column j holds token j+1 of the full
sequence (prompt + response), predicted from positions 0..j. The loss mask is 1 only
on sampled action tokens; prompt, observation and padding columns are 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint
from transformers import PreTrainedModel

from tracerl.policy.precision import autocast
from tracerl.policy.prefix import plan_prefixes
from tracerl.policy.sampler import cache_kwarg
from tracerl.types import Trajectory


@dataclass
class TokenBatch:
    input_ids: torch.Tensor  # (B, L) right-padded full sequences
    attention_mask: torch.Tensor  # (B, L)
    loss_mask: torch.Tensor  # (B, L-1) 1 on action tokens (as predicted positions)
    old_logp: torch.Tensor  # (B, L-1) behaviour logprobs (0 off the mask)
    advantages: torch.Tensor  # (B, L-1) (0 off the mask)
    prompt_lens: torch.Tensor | None = None
    """(B,) tokens of each row's prompt (a group's rows share it); None: not known."""

    def to(self, device: torch.device | str) -> TokenBatch:
        return TokenBatch(*(t.to(device) for t in (
            self.input_ids, self.attention_mask, self.loss_mask, self.old_logp,
            self.advantages)), prompt_lens=_maybe(self.prompt_lens, lambda t: t.to(device)))

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def select(self, idx: torch.Tensor) -> TokenBatch:
        return TokenBatch(self.input_ids[idx], self.attention_mask[idx], self.loss_mask[idx],
                          self.old_logp[idx], self.advantages[idx],
                          _maybe(self.prompt_lens, lambda t: t[idx]))

    def narrow(self, width: int) -> TokenBatch:
        """The first `width` columns (right padding beyond every row's end dropped)."""
        if width >= self.input_ids.shape[1]:
            return self
        return TokenBatch(self.input_ids[:, :width], self.attention_mask[:, :width],
                          *(t[:, : width - 1] for t in (
                              self.loss_mask, self.old_logp, self.advantages)),
                          prompt_lens=self.prompt_lens)


def _maybe(t: torch.Tensor | None, fn: Callable[[torch.Tensor], torch.Tensor]
           ) -> torch.Tensor | None:
    return None if t is None else fn(t)


def collate(trajectories: Sequence[Trajectory], pad_id: int) -> TokenBatch:
    """Pad trajectories into a TokenBatch (advantages default to 0 when not set)."""
    if not trajectories:
        raise ValueError("collate needs at least one trajectory")
    width = max(len(t.token_ids()) for t in trajectories)
    n = len(trajectories)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    attn = torch.zeros((n, width), dtype=torch.long)
    mask = torch.zeros((n, width - 1))
    old = torch.zeros((n, width - 1))
    adv = torch.zeros((n, width - 1))
    for i, t in enumerate(trajectories):
        full = t.token_ids()
        ids[i, : len(full)] = torch.tensor(full)
        attn[i, : len(full)] = 1
        start = len(t.prompt_ids) - 1  # column predicting the first response token
        resp = len(full) - len(t.prompt_ids)
        mask[i, start : start + resp] = torch.tensor(t.loss_mask(), dtype=torch.float)
        old[i, start : start + resp] = torch.tensor(t.behaviour_logprobs())
        if t.advantages is not None:
            if len(t.advantages) != resp:
                raise ValueError(f"trajectory {t.task.id}: {len(t.advantages)} advantages for "
                                 f"{resp} response tokens")
            adv[i, start : start + resp] = torch.tensor(t.advantages)
    plens = torch.tensor([len(t.prompt_ids) for t in trajectories])
    return TokenBatch(ids, attn, mask, old, adv, plens)


LOGITS_PER_CHUNK = 256 * 49_152
"""Logits computed at a time: 256 positions of SmolLM2's vocabulary, 50 MB of float32
(a batch of 8 x 256 at once is 400 MB). A small vocabulary fits the batch in one chunk."""


SELECT_MIN_VOCAB = 4096
"""Below this vocabulary size projecting every position is cheaper than gathering the
wanted ones (the character vocabulary: 0.84-0.87x with selection; SmolLM2's 49k: 1.15x;
docs/benchmarks.md, "Against TRL")."""


def _chunk_logprobs(head: torch.nn.Module, hidden: torch.Tensor, targets: torch.Tensor,
                    temperature: float) -> torch.Tensor:
    """log p(target) for a chunk of positions: (N, H), (N,) -> (N,)."""
    logits = head(hidden).float()  # (N, V)
    if temperature not in (0.0, 1.0):
        logits = logits / temperature
    picked = logits.gather(-1, targets[:, None]).squeeze(-1)  # (N,)
    return picked - torch.logsumexp(logits, dim=-1)  # (N,)


def prompt_rows(input_ids: torch.Tensor, prompt_lens: torch.Tensor) -> list[list[int]]:
    """Each row's prompt tokens (its first `prompt_lens` ids): what the update's shared
    prefixes and micro-batch groups are made of."""
    return [r[:p] for r, p in zip(input_ids.tolist(), prompt_lens.tolist(), strict=True)]


def drops_cache(decoder: torch.nn.Module) -> bool:
    """Whether a training forward pass gives no KV cache (gradient checkpointing)."""
    return bool(getattr(decoder, "gradient_checkpointing", False)) and decoder.training


def output_cache(out: Any) -> Any:
    """The KV cache a decoder's forward returned (`cache` in transformers >= 5,
    `past_key_values` before), or None."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else getattr(out, "past_key_values", None)


def _shared_prompt_hidden(decoder: torch.nn.Module, input_ids: torch.Tensor,
                          attention_mask: torch.Tensor, prompt_lens: torch.Tensor
                          ) -> torch.Tensor | None:
    """The decoder's last hidden states (B, L, H) with each shared prefix of the prompts
    run once.

    The prompts (each row's first `prompt_lens` tokens) are partitioned as the sampler's
    prefill partitions its contexts (tracerl.policy.prefix): the G samples of a group
    share their prompt, rows of different tasks the system prompt and tool list. Each
    prefix runs once; its KV cache (with gradients) is repeated for its rows and only
    the rest of each row runs per row. None when nothing is shared or the cache cannot
    be used (gradient checkpointing drops it).
    """
    lens = prompt_lens.tolist()
    if min(lens) < 1 or drops_cache(decoder):
        return None
    plan = plan_prefixes(prompt_rows(input_ids, prompt_lens))
    if any(not p for p in plan.prefixes) or sum(plan.cut) <= sum(map(len, plan.prefixes)):
        return None  # a one-token prompt, or no position would run fewer times
    group, cuts = plan.cluster, plan.cut
    device, length = input_ids.device, input_ids.shape[1]
    width = max(len(p) for p in plan.prefixes)
    prompt_ids = torch.zeros((len(plan.prefixes), width), dtype=torch.long)
    prompt_mask = torch.zeros((len(plan.prefixes), width), dtype=torch.long)
    for u, p in enumerate(plan.prefixes):
        prompt_ids[u, width - len(p):] = torch.tensor(p)
        prompt_mask[u, width - len(p):] = 1
    prompt_ids, prompt_mask = prompt_ids.to(device), prompt_mask.to(device)
    out = decoder(input_ids=prompt_ids, attention_mask=prompt_mask,
                  position_ids=(prompt_mask.cumsum(-1) - 1).clamp(min=0), use_cache=True)
    cache = output_cache(out)
    if cache is None:
        return None
    g = torch.tensor(group, device=device)
    cache.batch_select_indices(g)  # (U, ...) -> (B, ...); gradients flow back to the prefix
    span = length - min(cuts)  # columns after the shortest prefix
    cols = torch.tensor(cuts, device=device)[:, None] + torch.arange(span, device=device)[None]
    inside = cols < length
    resp_ids = input_ids.gather(1, cols.clamp(max=length - 1)) * inside
    resp_mask = attention_mask.gather(1, cols.clamp(max=length - 1)) * inside
    out2 = decoder(input_ids=resp_ids, attention_mask=torch.cat([prompt_mask[g], resp_mask], 1),
                   position_ids=cols, use_cache=True, **{cache_kwarg(decoder): cache})
    prompt_hidden, resp_hidden = out.last_hidden_state, out2.last_hidden_state
    pieces = [torch.cat([prompt_hidden[u, width - p:], resp_hidden[i, :length - p]])
              for i, (u, p) in enumerate(zip(group, cuts, strict=True))]
    return torch.stack(pieces)  # (B, L, H)


def token_logprobs(model: PreTrainedModel, input_ids: torch.Tensor,
                   attention_mask: torch.Tensor, temperature: float = 1.0,
                   chunk: int | None = None, *, where: torch.Tensor | None = None,
                   prompt_lens: torch.Tensor | None = None) -> torch.Tensor:
    """log p(token j+1 | tokens <= j) for every position; (B, L) -> (B, L-1).

    `temperature` divides the logits, matching the distribution the sampler drew from.
    The decoder runs once; its hidden states are projected to the vocabulary `chunk`
    positions of the flattened batch at a time (default: LOGITS_PER_CHUNK // vocabulary
    size), and with gradients and more than one chunk each chunk is recomputed in the
    backward pass (torch.utils.checkpoint), so float32 logits never exist for the whole
    batch: at most one chunk's. This assumes logits = lm_head(last hidden state), as in Llama,
    Qwen, Mistral and SmolLM2 (no final soft-capping or logit scaling).

    `where` (B, L-1), when given, names the positions wanted (the loss mask): only they
    are projected to the vocabulary, the rest are 0. `prompt_lens` (B,), when given, lets
    rows with the same prompt share one pass over it (`_shared_prompt_hidden`). Neither
    changes a wanted value beyond float rounding.
    """
    with autocast(model):
        decoder = model.get_decoder()
        hidden = None
        if prompt_lens is not None:
            hidden = _shared_prompt_hidden(decoder, input_ids, attention_mask, prompt_lens)
        if hidden is None:
            hidden = decoder(input_ids=input_ids, attention_mask=attention_mask,
                             use_cache=False).last_hidden_state  # (B, L, H)
    return hidden_logprobs(model, hidden, input_ids, temperature, chunk, where=where)


def hidden_logprobs(model: PreTrainedModel, hidden: torch.Tensor, input_ids: torch.Tensor,
                    temperature: float = 1.0, chunk: int | None = None, *,
                    where: torch.Tensor | None = None) -> torch.Tensor:
    """log p(token j+1) from the decoder's last hidden states (B, L, H) at positions j of
    `input_ids` (B, L); (B, L-1), 0 off `where` when given (`token_logprobs`: the chunked
    projection, the selection of wanted positions)."""
    with autocast(model):
        head = model.get_output_embeddings()
        b, length, width = hidden.shape
        flat = hidden[:, :-1].reshape(-1, width)  # (B*(L-1), H)
        targets = input_ids[:, 1:].reshape(-1)  # (B*(L-1),)
        picked = None
        select = where is not None and head.weight.shape[0] >= SELECT_MIN_VOCAB
        if select:
            picked = where.reshape(-1).nonzero().squeeze(-1)  # (N,)
            flat, targets = flat[picked], targets[picked]
        chunk = chunk or max(1, LOGITS_PER_CHUNK // head.weight.shape[0])
        recompute = flat.shape[0] > chunk and torch.is_grad_enabled() and (
            flat.requires_grad or any(p.requires_grad for p in head.parameters()))
        pieces = []
        for start in range(0, flat.shape[0], chunk):
            h, t = flat[start:start + chunk], targets[start:start + chunk]
            if recompute:
                pieces.append(checkpoint(_chunk_logprobs, head, h, t, temperature,
                                         use_reentrant=False))
            else:
                pieces.append(_chunk_logprobs(head, h, t, temperature))
    values = torch.cat(pieces) if pieces else hidden.new_zeros((0,), dtype=torch.float32)
    if picked is not None:
        values = values.new_zeros(b * (length - 1)).index_put((picked,), values)
    values = values.view(b, length - 1)  # (B, L-1)
    if where is not None and not select:
        values = values * where  # every position was projected; 0 off the wanted ones
    return values


def batch_logprobs(model: PreTrainedModel, batch: TokenBatch,
                   temperature: float = 1.0) -> torch.Tensor:
    """`token_logprobs` of a TokenBatch where the loss needs them (its action tokens, 0
    elsewhere), each group's prompt run once; (B, L-1)."""
    return token_logprobs(model, batch.input_ids, batch.attention_mask, temperature,
                          where=batch.loss_mask > 0, prompt_lens=batch.prompt_lens)

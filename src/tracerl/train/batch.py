"""Trajectories -> padded tensors, and the per-token log-probabilities of a model.

Tensors are aligned on *predicted* positions: column j holds token j+1 of the full
sequence (prompt + response), predicted from positions 0..j. The loss mask is 1 only
on sampled action tokens; prompt, observation and padding columns are 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch.utils.checkpoint import checkpoint
from transformers import PreTrainedModel

from tracerl.policy.precision import autocast
from tracerl.types import Trajectory


@dataclass
class TokenBatch:
    input_ids: torch.Tensor  # (B, L) right-padded full sequences
    attention_mask: torch.Tensor  # (B, L)
    loss_mask: torch.Tensor  # (B, L-1) 1 on action tokens (as predicted positions)
    old_logp: torch.Tensor  # (B, L-1) behaviour logprobs (0 off the mask)
    advantages: torch.Tensor  # (B, L-1) (0 off the mask)

    def to(self, device: torch.device | str) -> TokenBatch:
        return TokenBatch(*(t.to(device) for t in (
            self.input_ids, self.attention_mask, self.loss_mask, self.old_logp,
            self.advantages)))

    def __len__(self) -> int:
        return self.input_ids.shape[0]

    def select(self, idx: torch.Tensor) -> TokenBatch:
        return TokenBatch(self.input_ids[idx], self.attention_mask[idx], self.loss_mask[idx],
                          self.old_logp[idx], self.advantages[idx])


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
    return TokenBatch(ids, attn, mask, old, adv)


LOGITS_PER_CHUNK = 256 * 49_152
"""Logits computed at a time: 256 positions of SmolLM2's vocabulary, 50 MB of float32
(a batch of 8 x 256 at once is 400 MB). A small vocabulary fits the batch in one chunk."""


def _chunk_logprobs(head: torch.nn.Module, hidden: torch.Tensor, targets: torch.Tensor,
                    temperature: float) -> torch.Tensor:
    """log p(target) for a chunk of positions: (N, H), (N,) -> (N,)."""
    logits = head(hidden).float()  # (N, V)
    if temperature not in (0.0, 1.0):
        logits = logits / temperature
    picked = logits.gather(-1, targets[:, None]).squeeze(-1)  # (N,)
    return picked - torch.logsumexp(logits, dim=-1)  # (N,)


def token_logprobs(model: PreTrainedModel, input_ids: torch.Tensor,
                   attention_mask: torch.Tensor, temperature: float = 1.0,
                   chunk: int | None = None) -> torch.Tensor:
    """log p(token j+1 | tokens <= j) for every position; (B, L) -> (B, L-1).

    `temperature` divides the logits, matching the distribution the sampler drew from.
    The decoder runs once; its hidden states are projected to the vocabulary `chunk`
    positions of the flattened batch at a time (default: LOGITS_PER_CHUNK // vocabulary
    size), and with gradients and more than one chunk each chunk is recomputed in the
    backward pass (torch.utils.checkpoint), so float32 logits never exist for the whole
    batch: at most one chunk's. This assumes logits = lm_head(last hidden state), as in Llama,
    Qwen, Mistral and SmolLM2 (no final soft-capping or logit scaling).
    """
    with autocast(model):
        hidden = model.get_decoder()(input_ids=input_ids, attention_mask=attention_mask,
                                     use_cache=False).last_hidden_state  # (B, L, H)
        head = model.get_output_embeddings()
        b, length, width = hidden.shape
        flat = hidden[:, :-1].reshape(-1, width)  # (B*(L-1), H)
        targets = input_ids[:, 1:].reshape(-1)  # (B*(L-1),)
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
    if not pieces:
        return hidden.new_zeros((b, 0), dtype=torch.float32)
    return torch.cat(pieces).view(b, length - 1)  # (B, L-1)

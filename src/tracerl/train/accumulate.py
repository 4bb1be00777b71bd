"""Gradient accumulation over micro-batches, each shared prompt run once per update.

An update split into micro-batches (tracerl.train.micro) used to rerun a prompt in
every piece that held one of its rows: a group whose prompt alone nearly fills the
budget (BFCL's tool lists run 500-1,500 tokens of SmolLM2's against a 512-position
budget) went one row a piece, its prompt run G times, and the system prompt SFT
demonstrations share was run once per piece. Here each shared prefix of the batch's
prompts (tracerl.policy.prefix, as the sampler's prefill partitions them) runs once,
with gradients; its KV cache is detached into leaf tensors that every piece of its rows
attends to, so the pieces' backward passes accumulate the cache's gradient on those
leaves; once the last piece of the prefix is done, that gradient is sent back through
the prefix pass (one backward over the prefix). The result is the gradient of the whole
batch at once, to float rounding; what runs is each prefix once plus every row's rest.

Memory: a prefix's activations live until its rows are done, beside one piece's; pieces
of a prefix's rows hold at most `max_tokens - prefix length` positions of rows' rests
(at least one row), so the peak is about what a piece of prefix and rows held before.

Falls back to the per-piece path (`micro_batches`, `batch_logprobs`) where the prefix
cannot be shared: no micro-batches asked for (the whole batch is one pass that already
shares its prompts), no prompt lengths, a one-token prompt, gradient checkpointing (no
cache in the forward pass), or a model whose cache is not the layered one of
transformers >= 5.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from transformers import PreTrainedModel

from tracerl.policy.precision import autocast
from tracerl.policy.prefix import plan_prefixes
from tracerl.policy.sampler import cache_kwarg
from tracerl.train.batch import (
    TokenBatch,
    batch_logprobs,
    drops_cache,
    hidden_logprobs,
    output_cache,
    prompt_rows,
)
from tracerl.train.micro import MicroBatch, micro_batches, pack

PieceLoss = Callable[[MicroBatch, TokenBatch, torch.Tensor], torch.Tensor]
"""(piece, its part of the batch, its log-probs (b, w-1), 0 off the loss mask) -> the
piece's loss, already scaled by its share of the batch's aggregate."""


@dataclass(frozen=True)
class PromptCluster:
    """Rows whose prompts open with one shared prefix, and their pieces."""

    prefix: list[int]
    pieces: list[MicroBatch]


def prompt_clusters(batch: TokenBatch, max_tokens: int) -> list[PromptCluster] | None:
    """The batch's rows by shared prompt prefix, each cluster's rows in pieces of at most
    `max_tokens - prefix length` positions of their rests (one row at least); None when
    no prefix can be shared (no prompt lengths, or a one-token prompt)."""
    if batch.prompt_lens is None or int(batch.prompt_lens.min()) < 2:
        return None
    plan = plan_prefixes(prompt_rows(batch.input_ids, batch.prompt_lens))
    lengths = batch.attention_mask.sum(-1).tolist()
    out = []
    for c, prefix in enumerate(plan.prefixes):
        rows = [i for i, k in enumerate(plan.cluster) if k == c]
        cut = len(prefix)
        runs = pack([lengths[i] - cut for i in rows], max(1, max_tokens - cut))
        pieces = [MicroBatch(torch.tensor([rows[j] for j in run]),
                             int(max(lengths[rows[j]] for j in run))) for run in runs]
        out.append(PromptCluster(prefix, pieces))
    return out


def _layers(cache: Any) -> list[Any] | None:
    layers = getattr(cache, "layers", None)
    if not layers or not all(hasattr(x, "keys") and hasattr(x, "values") for x in layers):
        return None
    return list(layers)


def _cache_for(template: Any, leaves: list[tuple[torch.Tensor, torch.Tensor]], rows: int
               ) -> Any:
    """A copy of the prefix's cache for `rows` rows, its tensors views of the leaves."""
    cache = copy.copy(template)
    cache.layers = [copy.copy(layer) for layer in template.layers]
    for layer, (k, v) in zip(cache.layers, leaves, strict=True):
        layer.keys = k.expand(rows, *k.shape[1:])
        layer.values = v.expand(rows, *v.shape[1:])
    return cache


def _piece_logprobs(model: PreTrainedModel, part: TokenBatch, cut: int, template: Any,
                    leaves: list[tuple[torch.Tensor, torch.Tensor]], temperature: float
                    ) -> torch.Tensor:
    """`batch_logprobs` of a piece whose rows all open with the prefix of length `cut`
    held in (`template`, `leaves`): only the rest of each row runs; (b, w-1)."""
    decoder = model.get_decoder()
    b, width = part.input_ids.shape
    ids = part.input_ids[:, cut:]
    device = ids.device
    mask = torch.cat([torch.ones((b, cut), dtype=part.attention_mask.dtype, device=device),
                      part.attention_mask[:, cut:]], 1)
    positions = torch.arange(cut, width, device=device).expand(b, -1)
    with autocast(model):
        hidden = decoder(input_ids=ids, attention_mask=mask, position_ids=positions,
                         use_cache=True, **{cache_kwarg(decoder): _cache_for(template, leaves, b)}
                         ).last_hidden_state  # (b, w - cut, H)
    rest = hidden_logprobs(model, hidden, ids, temperature, where=part.loss_mask[:, cut:] > 0)
    out = rest.new_zeros((b, width - 1))
    out[:, cut:] = rest  # the loss mask starts at the last prompt token, never before cut
    return out


def _prefix_pass(model: PreTrainedModel, prefix: list[int], device: torch.device
                 ) -> tuple[Any, list[tuple[torch.Tensor, torch.Tensor]]] | None:
    """The prefix's KV cache (with gradients) and its per-layer (keys, values); None when
    the model gives no layered cache."""
    decoder = model.get_decoder()
    if drops_cache(decoder):
        return None
    ids = torch.tensor([prefix], device=device)
    with autocast(model):
        out = decoder(input_ids=ids, attention_mask=torch.ones_like(ids), use_cache=True)
    cache = output_cache(out)
    layers = _layers(cache)
    if layers is None:
        return None
    return cache, [(layer.keys, layer.values) for layer in layers]


def accumulate(model: PreTrainedModel, batch: TokenBatch, max_tokens: int, temperature: float,
               piece_loss: PieceLoss) -> None:
    """Backpropagate `piece_loss` of every piece of `batch` (module docstring): the
    gradient of the whole batch's loss accumulates on the model's parameters."""
    clusters = prompt_clusters(batch, max_tokens) if max_tokens > 0 else None
    device = batch.input_ids.device
    passed = _prefix_pass(model, clusters[0].prefix, device) if clusters else None
    if clusters is None or passed is None:
        for piece in micro_batches(batch, max_tokens):
            part = piece.of(batch)
            piece_loss(piece, part, batch_logprobs(model, part, temperature)).backward()
        return
    for cluster in clusters:
        if passed is None:
            passed = _prefix_pass(model, cluster.prefix, device)
        if passed is None:
            raise RuntimeError("the model gave a layered KV cache for one prefix, not another")
        template, kv = passed
        passed = None  # the prefix's graph lives only while its rows are done
        leaves = [(k.detach().requires_grad_(k.requires_grad),
                   v.detach().requires_grad_(v.requires_grad)) for k, v in kv]
        for piece in cluster.pieces:
            part = piece.of(batch)
            logp = _piece_logprobs(model, part, len(cluster.prefix), template, leaves,
                                   temperature)
            piece_loss(piece, part, logp).backward()
        sent = [(t, leaf.grad) for pair, leaf_pair in zip(kv, leaves, strict=True)
                for t, leaf in zip(pair, leaf_pair, strict=True) if leaf.grad is not None]
        if sent:  # the cache's gradient, back through the prefix pass
            torch.autograd.backward([t for t, _ in sent], [g for _, g in sent])

"""Attention for one new token on a CPU in bfloat16 (or float16), where torch's SDPA is slow.

Decoding runs attention for a single query position per row against the whole KV cache.
transformers' `sdpa` implementation hands that to `scaled_dot_product_attention`, which on
a CPU picks its flash kernel; in bfloat16 that kernel made attention 56% of SmolLM2-135M's
sampling time on a Zen 5 CPU with AVX-512 BF16 (4.8 ms per layer call for 32 rows at 340
positions; docs/benchmarks.md, "Decoding attention in bfloat16"). Two small matmuls and a
softmax in float32 do the same work in a fraction of it.

`DECODE_ATTENTION` is an attention implementation that computes exactly that case itself
(one query position, CPU, a 16-bit dtype, a boolean mask or none, nothing else asked of
it: no dropout, soft-capping, position bias or attention sinks) and passes every other
call to transformers' own SDPA function, so prefill and training passes are unchanged.
It uses SDPA's masks. `use_decode_attention` switches a model that runs `sdpa` to it.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import AttentionInterface, PreTrainedModel
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

DECODE_ATTENTION = "tracerl_sdpa"
_EXTRAS = ("softcap", "position_bias", "s_aux", "sinks")


def _own_case(query: torch.Tensor, attention_mask: torch.Tensor | None, dropout: float,
              kwargs: dict[str, Any]) -> bool:
    return (query.shape[2] == 1 and query.device.type == "cpu"
            and query.dtype in (torch.bfloat16, torch.float16) and not dropout
            and (attention_mask is None or attention_mask.dtype == torch.bool)
            and all(kwargs.get(k) is None for k in _EXTRAS))


def decode_attention(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor,
                     value: torch.Tensor, attention_mask: torch.Tensor | None,
                     dropout: float = 0.0, scaling: float | None = None,
                     **kwargs: Any) -> tuple[torch.Tensor, None]:
    """transformers' attention signature: query (B, H, Q, D), key and value (B, KV, T, D)
    with H a multiple of KV, mask (B, 1, Q, T) boolean (True: attend); returns (B, Q, H,
    D) and no weights."""
    if not _own_case(query, attention_mask, dropout, kwargs):
        return sdpa_attention_forward(module, query, key, value, attention_mask,
                                      dropout=dropout, scaling=scaling, **kwargs)
    b, heads, _, dim = query.shape
    kv = key.shape[1]
    q = query.reshape(b, kv, heads // kv, dim)  # the query heads that share a KV head
    scale = dim ** -0.5 if scaling is None else scaling
    # In float32, as SDPA's kernel accumulates: scores, softmax and the weighted sum (the
    # cache's keys and values are converted, a copy that costs less than the kernel saved)
    scores = torch.matmul(key.float(), q.float().transpose(-1, -2) * scale)  # (B, KV, T, G)
    scores = scores.transpose(-1, -2)
    if attention_mask is not None:
        keep = attention_mask.reshape(attention_mask.shape[0], 1, 1, attention_mask.shape[-1])
        scores = scores.masked_fill(~keep, float("-inf"))
    probs = scores.softmax(-1)
    out = torch.matmul(probs, value.float()).reshape(b, heads, 1, value.shape[-1])
    return out.transpose(1, 2).to(value.dtype).contiguous(), None


AttentionInterface.register(DECODE_ATTENTION, decode_attention)
AttentionMaskInterface.register(DECODE_ATTENTION, sdpa_mask)


def use_decode_attention(model: PreTrainedModel) -> None:
    """Run `model`'s attention through `decode_attention` if it runs transformers' SDPA
    (other implementations, eager or flash, are left as they are)."""
    if getattr(model.config, "_attn_implementation", None) == "sdpa":
        model.set_attn_implementation(DECODE_ATTENTION)

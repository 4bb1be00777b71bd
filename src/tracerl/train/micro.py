"""Micro-batches: one optimiser step's batch split into pieces that each fit in memory.

The gradient is accumulated over the pieces, each piece's loss scaled by its share of
the whole batch's aggregation (`tracerl.algorithms.losses.loss_share`), so the step is
the same as on the whole batch at once (to float rounding) while the activations held
for the backward pass are one piece's. A group's rows (the same prompt) stay in one
piece when they fit, so the prompt is still run once for all of them
(`batch._shared_prompt_hidden`), and groups join a piece while its cost fits.

The budget counts decoder positions as the update runs them: each shared prefix of the
piece's prompts once (a group's prompt; the system prompt and tool list that rows of
different tasks share), then the rest of every row. Measured on SmolLM2-135M (LoRA r16,
bfloat16 base): about 1 MB of activations per position (docs/benchmarks.md, "Pretrained models").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from tracerl.policy.prefix import plan_prefixes
from tracerl.train.batch import TokenBatch, prompt_rows


@dataclass(frozen=True)
class MicroBatch:
    rows: torch.Tensor
    """(b,) row indices into the whole batch."""
    width: int
    """Columns of input_ids the piece needs (its longest row)."""

    def of(self, batch: TokenBatch) -> TokenBatch:
        """The piece of `batch`, trimmed to its own longest row."""
        return batch.select(self.rows).narrow(self.width)

    def cols(self, t: torch.Tensor) -> torch.Tensor:
        """The piece of a (B, L-1) tensor aligned with the batch's predicted positions."""
        return t[self.rows.to(t.device), : self.width - 1]


def pack(costs: Sequence[int], budget: int) -> list[list[int]]:
    """Consecutive items into bins whose costs sum to at most `budget`; an item over the
    budget gets a bin of its own. [] for no items."""
    bins: list[list[int]] = []
    used = budget + 1  # forces a first bin
    for i, c in enumerate(costs):
        if used + c > budget:
            bins.append([])
            used = 0
        bins[-1].append(i)
        used += c
    return bins


def _groups(batch: TokenBatch) -> list[list[int]]:
    """Rows with the same prompt, in order of first appearance (one row each without
    prompt lengths)."""
    if batch.prompt_lens is None:
        return [[i] for i in range(len(batch))]
    index: dict[tuple[int, ...], list[int]] = {}
    for i, prompt in enumerate(prompt_rows(batch.input_ids, batch.prompt_lens)):
        index.setdefault(tuple(prompt), []).append(i)
    return list(index.values())


def micro_batches(batch: TokenBatch, max_tokens: int) -> list[MicroBatch]:
    """Split `batch` into pieces of at most about `max_tokens` decoder positions each
    (0 = the whole batch as one piece). Whole groups are packed together; a group over
    the budget alone is split into runs of its rows, each still sharing its prompt."""
    lengths = batch.attention_mask.sum(-1).tolist()
    whole = MicroBatch(torch.arange(len(batch)), int(max(lengths)))
    if max_tokens <= 0:
        return [whole]
    plens = batch.prompt_lens.tolist() if batch.prompt_lens is not None else [0] * len(batch)
    prompts = (prompt_rows(batch.input_ids, batch.prompt_lens) if batch.prompt_lens is not None
               else [[] for _ in plens])

    def cost(rows: list[int]) -> int:
        """Decoder positions the update runs for these rows: their prompts' shared
        prefixes once (batch._shared_prompt_hidden), the rest of every row."""
        if any(plens[i] < 1 for i in rows):
            return sum(lengths[i] for i in rows)
        plan = plan_prefixes([prompts[i] for i in rows])
        return (sum(map(len, plan.prefixes))
                + sum(lengths[i] - cut for i, cut in zip(rows, plan.cut, strict=True)))

    units: list[list[int]] = []  # groups, or runs of a group's rows when it is too big
    for g in _groups(batch):
        if len(g) == 1 or cost(g) <= max_tokens:
            units.append(g)
            continue
        first = plens[g[0]]
        runs = pack([lengths[i] - first for i in g], max(1, max_tokens - first))
        units.extend([g[j] for j in run] for run in runs)
    out, piece = [], []
    for unit in units:  # greedily, in order: a unit joins the piece while it still fits
        if piece and cost(piece + unit) > max_tokens:
            out.append(piece)
            piece = []
        piece = piece + unit
    out.append(piece)
    return [MicroBatch(torch.tensor(sorted(rows)), int(max(lengths[i] for i in rows)))
            for rows in out]

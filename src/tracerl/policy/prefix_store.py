"""Keys and values of prefixes already prefilled, kept between the sampler's calls.

A multi-turn episode comes back to the sampler on every turn with its whole context:
the prompt (on BFCL 300-1,000 tokens of function docs, on its multi-turn categories
4,000), the turns so far, the new observation. Without a memory each turn runs the
prompt again. The shared-prefix plan (tracerl.policy.prefix) removes the repeats within
one call; `PrefixStore` removes those between calls: it keeps the keys and values of
each prefix the prefill ran (one entry per prefix, unpadded, per layer), and the next
call's prefix pass starts from the longest stored match and runs only the rest.

Entries are valid only for the weights that computed them: `check` takes a fingerprint
of the model (`weights_fingerprint`) and empties the store when it changed. The store holds at most
`max_bytes`, least recently used out first; an entry that a longer one extended is
dropped (the longer one holds it). Entries matched or stored during the current call
(`begin_call`) are never evicted for another of that call: when a call's contexts do not
all fit, the ones stored first stay and the rest are not stored. (Plain LRU thrashed
there: an evaluation of 60 BFCL tasks, decoded 32 rows at a time, evicted each batch's
entries with the next batch's, so nearly every turn missed.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

MIN_REUSE = 16
"""Shorter matches are run again: gathering a stored entry costs more than a few tokens."""

Layers = list[tuple[torch.Tensor, torch.Tensor]]
"""Per decoder layer, keys and values (heads, positions, head_dim)."""


def weights_fingerprint(model: torch.nn.Module) -> tuple:
    """What a model's outputs depend on beyond the tokens, cheaply: which parameter
    tensors it holds and each one's in-place version counter (`load_state_dict`, a weight
    sync and `copy_` bump it), the sum of every trainable parameter, and which adapters
    are switched off.

    The sums are there because torch's fused AdamW (the trainer's optimiser) updates the
    parameters in a kernel that bumps no version counter: versions alone missed every
    optimiser step. Summing the trainable tensors costs 8 ms on SmolLM2-135M's LoRA r16
    adapter (420 tensors), 0.12 s for all of its weights in full fine-tuning."""
    params = tuple((id(p), p._version) for p in model.parameters())
    trainable = [p for p in model.parameters() if p.requires_grad]
    with torch.no_grad():
        sums = tuple(torch.stack([p.sum(dtype=torch.float32) for p in trainable]).tolist()
                     ) if trainable else ()
    off = tuple(bool(m.disable_adapters) for m in model.modules()
                if isinstance(getattr(type(m), "disable_adapters", None), property))
    return params, sums, off


def _lcp(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


@dataclass
class _Entry:
    ids: np.ndarray
    layers: Layers
    nbytes: int
    call: int
    """The last call that matched or stored it."""


class PrefixStore:
    """Prefilled prefixes' keys and values by token ids (module docstring)."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0 (0 = off), got {max_bytes}")
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[int, ...], _Entry] = OrderedDict()
        self._bytes = 0
        self._fingerprint: tuple | None = None
        self._call = 0
        self.reused_tokens = 0
        """Prefix positions taken from the store instead of being run (a running total)."""

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        return self._bytes

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    def begin_call(self) -> None:
        """A new sampler call: what earlier calls used may now make room."""
        self._call += 1

    def check(self, model: torch.nn.Module) -> None:
        """Empty the store if the model's weights changed since the last check."""
        fingerprint = weights_fingerprint(model)
        if fingerprint != self._fingerprint:
            self.clear()
            self._fingerprint = fingerprint

    def match(self, ids: Sequence[int]) -> tuple[int, tuple[int, ...] | None]:
        """The longest stored prefix of `ids` (positions, entry key), or (0, None) when
        none reaches MIN_REUSE."""
        if not self._entries or len(ids) < MIN_REUSE:
            return 0, None
        want = np.asarray(ids, dtype=np.int64)
        best, key = 0, None
        for k, entry in self._entries.items():
            n = _lcp(entry.ids, want)
            if n > best:
                best, key = n, k
        if best < MIN_REUSE:
            return 0, None
        self._entries.move_to_end(key)  # type: ignore[arg-type]
        self._entries[key].call = self._call  # type: ignore[index]
        return best, key

    def get(self, key: tuple[int, ...], n: int) -> Layers:
        """The first `n` positions of an entry, per layer (views, not copies)."""
        return [(k[:, :n], v[:, :n]) for k, v in self._entries[key].layers]

    def put(self, ids: Sequence[int], layers: Layers,
            extends: tuple[int, ...] | None = None) -> bool:
        """Keep `layers` (owned by the store from now on) for `ids`; `extends`, the entry
        it started from, goes if `ids` holds all of it. False (nothing changed) when it
        fits only by evicting what this call uses."""
        key = tuple(ids)
        nbytes = sum(k.nbytes + v.nbytes for k, v in layers)
        if not self.room_for(key, nbytes, extends):
            return False
        for k in self._replaced(key, extends):
            self._drop(k)
        self._entries[key] = _Entry(np.asarray(key, dtype=np.int64), layers, nbytes,
                                    self._call)
        self._bytes += nbytes
        for k in [k for k, e in self._entries.items() if e.call < self._call]:
            if self._bytes <= self.max_bytes:
                break
            self._drop(k)
        return True

    def room_for(self, ids: Sequence[int], nbytes: int,
                 extends: tuple[int, ...] | None = None) -> bool:
        """Whether `put` of `nbytes` for `ids` would keep it (asked before copying the
        keys and values out of a cache, so a call that will not be stored copies
        nothing)."""
        if self.max_bytes == 0:
            return False
        replaced = self._replaced(tuple(ids), extends)
        freed = sum(self._entries[k].nbytes for k in replaced)
        evictable = sum(e.nbytes for k, e in self._entries.items()
                        if e.call < self._call and k not in replaced)
        return self._bytes - freed - evictable + nbytes <= self.max_bytes

    def _replaced(self, key: tuple[int, ...], extends: tuple[int, ...] | None
                  ) -> set[tuple[int, ...]]:
        """The entries a put of `key` drops: itself and the one it extends, if held."""
        return {k for k in (key, extends) if k is not None and k in self._entries
                and key[:len(k)] == k}

    def _drop(self, key: tuple[int, ...]) -> None:
        self._bytes -= self._entries.pop(key).nbytes

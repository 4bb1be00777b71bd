"""Batched token sampling with a KV cache, for the transformers backend.

Contexts of different lengths are left-padded into one batch and prefilled together,
each shared prefix once (a group's prompt, the system prompt: tracerl.policy.prefix) and
its cache rows repeated; decoding then feeds one token per row. Rows that finish (a stop
token, a completed stop string or their own token budget) ride along as padding until
half the batch is done, then the finished rows are dropped from the batch and the cache
at once: short turns do not pay for long ones, and the cache is copied log2(B) times at
most rather than once per finished row.

Stop strings are found by decoding only the tail of each row: every token decodes to at
least one byte, so the last `len(stop in bytes) + 2` tokens hold any stop string the
newest token completed (the 2 spare tokens absorb a first token that decodes differently
out of context, such as half a UTF-8 character). A string found there is new, since the
row would have stopped on it a step earlier otherwise. Only rows whose newest token holds
the last character of a stop string are decoded at all (a table over the vocabulary,
made once per sampler), so the check costs almost nothing on most steps.

The log-probability recorded for each sampled token is under the distribution it was
sampled from (logits / temperature, before top-p truncation), which is what the trainer
recomputes (behaviour logprobs for importance ratios).
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.cache_utils import Cache

from tracerl.policy.kv_cache import growing_cache
from tracerl.policy.merged_lora import MergedLora, mergeable
from tracerl.policy.prefix import PrefixPlan, plan_prefixes
from tracerl.policy.prefix_store import PrefixStore
from tracerl.policy.sampler_settings import PREFIX_CACHE_MB
from tracerl.policy.sampling import Sample, SamplingParams
from tracerl.policy.weights import load_named

TokenCallback = Callable[[int, int, float], None]
"""`(row, token id, logprob)`, called as each token is sampled."""


def _choose(logits: torch.Tensor, p: SamplingParams, gen: torch.Generator | None
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pick one token per row; return (tokens (B,), their logprobs (B,), the entropy of
    each row's distribution (B,))."""
    logits = logits.float()
    if p.temperature == 0:
        logp = torch.log_softmax(logits, dim=-1)  # (B, V)
        tokens = logits.argmax(dim=-1)  # (B,)
        entropy = -(logp.exp() * logp).sum(-1)
        return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1), entropy
    logp = torch.log_softmax(logits / p.temperature, dim=-1)  # (B, V)
    probs = logp.exp()
    entropy = -(probs * logp).sum(-1)  # (B,) before top-p, like the logprobs
    if p.top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        cum = sorted_p.cumsum(dim=-1)
        keep = (cum - sorted_p) < p.top_p  # always keeps the most likely token
        sorted_p = sorted_p * keep
        probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
    tokens = draw(probs, gen)
    return tokens, logp.gather(-1, tokens[:, None]).squeeze(-1), entropy


def draw(probs: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
    """One token per row of `probs` (B, V), unnormalised weights >= 0, by inverting the
    cumulative distribution at one uniform draw per row. `torch.multinomial` draws an
    exponential variate for every entry instead: 43 ms against 1.6 ms for 32 rows of a
    49,152-token vocabulary here."""
    cum = probs.double().cumsum(-1)  # (B, V); float64 so rare tokens keep their share
    u = torch.rand((probs.shape[0], 1), generator=gen, dtype=torch.float64)
    tokens = torch.searchsorted(cum, u * cum[:, -1:], right=True)  # first cum > u * total
    tokens = tokens.clamp_(max=probs.shape[-1] - 1)
    # Rounding can land u * total on the total itself: take the row's likeliest token
    # rather than a trailing token of weight 0.
    zero = probs.gather(-1, tokens) <= 0
    if bool(zero.any()):
        tokens = torch.where(zero, probs.argmax(-1, keepdim=True), tokens)
    return tokens.squeeze(-1)  # (B,)


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


def last_logits_kwargs(model: PreTrainedModel) -> dict[str, int]:
    """Ask the prefill for the last position's logits only, where the model can: a
    49k-wide vocabulary makes logits at every prompt position a fifth of the prefill."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    params = inspect.signature(base.forward).parameters
    return {"logits_to_keep": 1} if "logits_to_keep" in params else {}


def _split_head(model: PreTrainedModel
                ) -> tuple[torch.nn.Module | None, torch.nn.Module | None]:
    """The model's decoder and output layer when its logits are exactly the output layer
    of the decoder's last hidden state (Llama, Qwen, Mistral, SmolLM2); (None, None)
    where the model scales or soft-caps them (Gemma 2, Cohere) or hides either part."""
    config = getattr(model, "config", None)
    if getattr(config, "final_logit_softcapping", None) or getattr(config, "logit_scale", None):
        return None, None
    try:
        decoder, head = model.get_decoder(), model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None, None
    if not isinstance(decoder, torch.nn.Module) or not isinstance(head, torch.nn.Linear):
        return None, None
    return decoder, head


@dataclass(frozen=True)
class _Net:
    """The model one `generate` call runs, with how to call it: the policy's own model,
    or the merged-adapter copy (tracerl.policy.merged_lora)."""

    model: PreTrainedModel
    cache_arg: str
    prefill_kwargs: dict[str, int]
    decoder: torch.nn.Module | None
    head: torch.nn.Module | None
    decoder_cache_arg: str

    @staticmethod
    def of(model: PreTrainedModel) -> _Net:
        decoder, head = _split_head(model)
        return _Net(model, cache_kwarg(model), last_logits_kwargs(model), decoder, head,
                    cache_kwarg(decoder) if decoder is not None else "")


def _shift(on_token: TokenCallback, offset: int) -> TokenCallback:
    """`on_token` for a batch that starts at row `offset` of the call's contexts."""
    return lambda row, token, logprob: on_token(row + offset, token, logprob)


class StopText:
    """Which rows' decoded tails contain a stop string."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, stops: Sequence[str]) -> None:
        if not stops or not all(stops):
            raise ValueError(f"stop strings must be non-empty, got {stops!r}")
        self.stops = tuple(stops)
        self.window = max(len(s.encode()) for s in self.stops) + 2
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is not None:  # the Rust decoder, without the Python wrapper's overhead
            self._decode = lambda rows: backend.decode_batch(rows, skip_special_tokens=False)
        else:
            self._decode = lambda rows: tokenizer.batch_decode(
                rows, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        # The token that completes a stop string holds its last character.
        last = {s[-1] for s in self.stops}
        pieces = self._decode([[i] for i in range(len(tokenizer))])
        self.may_end = [any(c in p for c in last) for p in pieces]

    def completed(self, rows: Sequence[Sequence[int]]) -> list[bool]:
        """For each row (its ids so far), whether its newest token completed a stop."""
        check = [i for i, r in enumerate(rows) if r[-1] < len(self.may_end)
                 and self.may_end[r[-1]]]
        done = [False] * len(rows)
        texts = self._decode([list(rows[i][-self.window:]) for i in check]) if check else []
        for i, text in zip(check, texts, strict=True):
            done[i] = any(s in text for s in self.stops)
        return done


class TransformersSampler:
    """The Sampler for a transformers causal LM (tracerl.policy.sampling.Sampler).

    `tokenizer` is needed to stop at strings (`SamplingParams.stop_strings`).
    `max_rows` > 0 decodes a call's contexts in consecutive batches of at most that many
    rows (in order), bounding the KV cache; 0 decodes them all at once.
    `prefix_cache_mb` bounds the keys and values of prefilled prefixes kept for the next
    calls (tracerl.policy.prefix_store: a turn's prefill starts where the last turn's
    stopped; 0 = off).
    `merge_lora` decodes a LoRA model through a copy with the adapter merged into its
    linear layers, merged again whenever the model's weights change
    (tracerl.policy.merged_lora); a model it cannot merge decodes through peft as is.
    """

    def __init__(self, model: PreTrainedModel, pad_id: int, seed: int | None = None,
                 tokenizer: PreTrainedTokenizerBase | None = None, max_rows: int = 0,
                 prefix_cache_mb: int = PREFIX_CACHE_MB, merge_lora: bool = False) -> None:
        if max_rows < 0:
            raise ValueError(f"max_rows must be >= 0 (0 = no limit), got {max_rows}")
        self.model = model
        self.max_rows = max_rows
        self.prefix_store = PrefixStore(prefix_cache_mb * 2**20)
        self.pad_id = pad_id
        self.tokenizer = tokenizer
        self._stop_text: dict[tuple[str, ...], StopText] = {}
        self.merged = MergedLora(model) if merge_lora and not mergeable(model) else None
        self._nets: dict[int, _Net] = {}
        self.generator: torch.Generator | None = None
        if seed is not None:
            self.generator = torch.Generator().manual_seed(seed)

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Weight sync (tracerl.policy.sampling.WeightSync): copy the learner's trained
        tensors into this sampler's model, between two `generate` calls."""
        load_named(self.model, weights)

    def _net(self) -> _Net:
        """What this call runs: the merged copy where there is one (current with the
        model's weights), else the model."""
        model = self.merged.current() if self.merged is not None else self.model
        net = self._nets.get(id(model))
        if net is None:
            net = self._nets[id(model)] = _Net.of(model)
        return net

    def release_contexts(self) -> None:
        """Forget the stored contexts (tracerl.policy.sampling.KeepsContexts)."""
        self.prefix_store.clear()

    @torch.no_grad()
    def generate(self, contexts: list[list[int]], params: SamplingParams,
                 budgets: list[int] | None = None,
                 on_token: TokenCallback | None = None) -> list[Sample]:
        """Continue each context until a stop id, a completed stop string or its budget
        (default max_new_tokens). `on_token(row, id, logprob)` is called for every sampled
        token as it is drawn (streaming servers), `row` indexing `contexts`."""
        if not contexts:
            return []
        if any(not c for c in contexts):
            raise ValueError("every context needs at least one token")
        if params.stop_strings and self.tokenizer is None:
            raise ValueError("stop strings need the tokenizer: "
                             "TransformersSampler(model, pad_id, tokenizer=...)")
        budgets = budgets or [params.max_new_tokens] * len(contexts)
        device = next(self.model.parameters()).device
        self.prefix_store.begin_call()
        step = self.max_rows or len(contexts)
        was_training = self.model.training
        self.model.eval()
        try:
            net = self._net()
            samples: list[Sample] = []
            for start in range(0, len(contexts), step):
                shifted = None if on_token is None else _shift(on_token, start)
                samples += self._decode(net, contexts[start:start + step], params,
                                        budgets[start:start + step], device, shifted)
            return samples
        finally:
            self.model.train(was_training)

    def _stopped(self, rows: list[Sample], params: SamplingParams,
                 stop_text: StopText | None) -> list[bool]:
        """Whether each row's newest token ended its turn (and mark those rows)."""
        hit = [s.ids[-1] in params.stop_ids for s in rows]
        if stop_text is not None:
            rest = [i for i, h in enumerate(hit) if not h]
            for i, done in zip(rest, stop_text.completed([rows[i].ids for i in rest]),
                               strict=True):
                hit[i] = done
        for s, h in zip(rows, hit, strict=True):
            if h:
                s.finish = "stop"
        return hit

    def _prefill(self, net: _Net, contexts: list[list[int]], decode: int,
                 device: torch.device) -> tuple[Cache, torch.Tensor, torch.Tensor, torch.Tensor]:
        """A cache filled with the contexts, with room for `decode` more positions; the
        last position's logits (B, V), the attention mask (B, T) and position ids (B, T)
        the decoding continues from. The cache is sized once, for the widest row's whole
        turn: the prefix pass allocates room for the suffix pass and the decoding too, so
        nothing is copied to grow it.

        Shared prefixes run once (tracerl.policy.prefix): the prefix pass holds one row
        per cluster, its cache rows are repeated for the cluster's members, and the
        suffix pass runs each row's remainder, left-padded so every row ends in the
        last column (padding in the middle is masked; positions stay contiguous). A row
        whose context extends a stored one (the prefix store: the last turn's context)
        at least as far as its cluster's prefix, or whose cluster is itself alone, starts
        from the stored keys and values instead, and every row's context is stored for
        the next call."""
        plan = plan_prefixes(contexts)
        if any(not p for p in plan.prefixes):  # a one-token context: nothing to share
            cache = growing_cache(spare=decode)
            ids, mask = _left_pad(contexts, self.pad_id, device)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            return cache, self._run(net, ids, mask, positions, cache), mask, positions
        store = self.prefix_store
        found: list[tuple[int, tuple[int, ...] | None]] = [(0, None)] * len(contexts)
        if store.max_bytes:
            store.check(self.model)
            found = [store.match(c[:-1]) for c in contexts]
        members = Counter(plan.cluster)
        # the store wins where it reaches as far as the row's shared prefix, or where the
        # row shares its prefix with no other (a lone context's prefix pass is its own)
        stored = [key is not None and (n >= cut or members[c] == 1)
                  for (n, key), cut, c in zip(found, plan.cut, plan.cluster, strict=True)]
        base = [n if s else cut for (n, _), cut, s in zip(found, plan.cut, stored, strict=True)]
        suffixes = [c[b:] for c, b in zip(contexts, base, strict=True)]
        spare = max(map(len, suffixes)) + decode
        if not any(stored):
            cache = growing_cache(spare=spare)
            ids, mask = _left_pad(plan.prefixes, self.pad_id, device)  # (C, P)
            self._run(net, ids, mask, (mask.cumsum(-1) - 1).clamp(min=0), cache,
                      logits=False)
            g = torch.tensor(plan.cluster, device=device)
            if plan.cluster != list(range(len(contexts))):
                cache.batch_select_indices(g)  # (C, ...) -> (B, ...)
            mask = mask[g]
        else:
            cache, mask = self._assemble(net, plan, found, stored, spare, device)
            store.reused_tokens += sum(n for (n, _), s in zip(found, stored, strict=True) if s)
        sids, smask = _left_pad(suffixes, self.pad_id, device)  # (B, S)
        positions = torch.tensor(base, device=device)[:, None] + (
            smask.cumsum(-1) - 1).clamp(min=0)  # (B, S)
        mask = torch.cat([mask, smask], dim=1)  # (B, P+S)
        logits = self._run(net, sids, mask, positions, cache)
        if store.max_bytes:
            per_position = sum(2 * layer.keys[0, :, 0].nbytes for layer in cache.layers)
            for row, (context, (_, key)) in enumerate(zip(contexts, found, strict=True)):
                cols = mask[row].nonzero().squeeze(-1)
                if not store.room_for(context, len(cols) * per_position, extends=key):
                    continue
                store.put(context, [(layer.keys[row][:, cols].clone(),
                                     layer.values[row][:, cols].clone())
                                    for layer in cache.layers], extends=key)
        return cache, logits, mask, positions

    def _assemble(self, net: _Net, plan: PrefixPlan,
                  found: list[tuple[int, tuple[int, ...] | None]], stored: list[bool],
                  spare: int, device: torch.device) -> tuple[Cache, torch.Tensor]:
        """The (B, ...) cache before the suffix pass when some rows start from the prefix
        store: those get their stored keys and values, the others their cluster's prefix
        (one prefix pass over the clusters they need), each right-aligned in the same
        columns; and its mask (B, W)."""
        clusters = sorted({plan.cluster[i] for i, s in enumerate(stored) if not s})
        pass_rows: dict[int, int] = {c: r for r, c in enumerate(clusters)}
        layers: list[tuple[torch.Tensor, torch.Tensor]] = []
        pmask = None
        if clusters:
            pcache = growing_cache(spare=0)
            ids, pmask = _left_pad([plan.prefixes[c] for c in clusters], self.pad_id, device)
            self._run(net, ids, pmask, (pmask.cumsum(-1) - 1).clamp(min=0), pcache,
                      logits=False)
            layers = [(layer.keys, layer.values) for layer in pcache.layers]
        rows = {i: self.prefix_store.get(key, n)  # type: ignore[arg-type]
                for i, ((n, key), s) in enumerate(zip(found, stored, strict=True)) if s}
        if not layers:
            layers = next(iter(rows.values()))
            layers = [(k[None], v[None]) for k, v in layers]  # shapes only
        width = max([n for (n, _), s in zip(found, stored, strict=True) if s]
                    + ([pmask.shape[1]] if pmask is not None else []))
        mask = torch.zeros((len(stored), width), dtype=torch.long, device=device)
        for i, s in enumerate(stored):
            if s:
                mask[i, width - found[i][0]:] = 1
            else:
                assert pmask is not None
                mask[i, width - pmask.shape[1]:] = pmask[pass_rows[plan.cluster[i]]]
        cache = growing_cache(spare=spare)
        for index, (k0, v0) in enumerate(layers):
            keys = k0.new_zeros((len(stored), k0.shape[1], width, k0.shape[-1]))
            values = v0.new_zeros((len(stored), v0.shape[1], width, v0.shape[-1]))
            for i, s in enumerate(stored):
                if s:
                    k, v = rows[i][index]
                    keys[i, :, width - k.shape[1]:] = k
                    values[i, :, width - v.shape[1]:] = v
                else:
                    r = pass_rows[plan.cluster[i]]
                    keys[i, :, width - k0.shape[2]:] = k0[r]
                    values[i, :, width - v0.shape[2]:] = v0[r]
            cache.update(keys.to(device), values.to(device), index)
        return cache, mask

    def _run(self, net: _Net, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor,
             cache: Cache, logits: bool = True) -> torch.Tensor:
        """A prefill pass into `cache`; the last position's logits (B, V) (an empty
        tensor with `logits=False`).

        The decoder and the output layer run apart where the logits are just the output
        layer of the last hidden state: asking the whole model for its last position's
        logits (`logits_to_keep=1`) made a peft model expand the (V, H) output weight to
        (B, H, V) and copy it, 3.5 GB and seconds of CPU per prefill of 64 rows of
        SmolLM2 with a LoRA adapter."""
        if net.decoder is not None and net.head is not None:
            out = net.decoder(input_ids=ids, attention_mask=mask, position_ids=positions,
                              use_cache=True, **{net.decoder_cache_arg: cache})
            if not logits:
                return ids.new_zeros(0)
            return net.head(out.last_hidden_state[:, -1].contiguous())  # (B, V)
        out = net.model(input_ids=ids, attention_mask=mask, position_ids=positions,
                        use_cache=True, **{net.cache_arg: cache}, **net.prefill_kwargs)
        return out.logits[:, -1]

    def _decode(self, net: _Net, contexts: list[list[int]], params: SamplingParams,
                budgets: list[int], device: torch.device, on_token: TokenCallback | None
                ) -> list[Sample]:
        stop_text = None
        if params.stop_strings and self.tokenizer is not None:
            stop_text = self._stop_text.get(params.stop_strings)
            if stop_text is None:
                stop_text = StopText(self.tokenizer, params.stop_strings)
                self._stop_text[params.stop_strings] = stop_text
        cache, logits, mask, positions = self._prefill(net, contexts, max(budgets), device)
        samples = [Sample([], [], "length", 0.0) for _ in contexts]
        batch = list(range(len(contexts)))  # batch row r holds sample batch[r]; -1: done
        pos = positions[:, -1:]  # (B, 1)
        while True:
            tokens, logps, entropy = _choose(logits, params, self.generator)
            alive = [r for r, i in enumerate(batch) if i >= 0]
            rows = [samples[batch[r]] for r in alive]
            tok, lp, h = tokens.tolist(), logps.tolist(), entropy.tolist()
            for r, s in zip(alive, rows, strict=True):
                s.ids.append(tok[r])
                s.logprobs.append(lp[r])
                s.entropy += h[r]  # type: ignore[operator]  # 0.0 here, never None
                if on_token is not None:
                    on_token(batch[r], tok[r], lp[r])
            for r, s, stop in zip(alive, rows, self._stopped(rows, params, stop_text),
                                  strict=True):
                if stop or len(s.ids) >= budgets[batch[r]]:
                    batch[r] = -1
            left = [r for r, i in enumerate(batch) if i >= 0]
            if not left:
                break
            # Finished rows stay in the batch as padding until half of it is done: a
            # decoding step reads every weight whatever the batch, while dropping rows
            # copies the whole KV cache, so compaction happens log2(B) times at most.
            if len(left) <= len(batch) // 2:
                idx = torch.tensor(left, device=device)
                cache.batch_select_indices(idx)
                tokens, mask, pos = tokens[idx], mask[idx], pos[idx]
                batch = [batch[r] for r in left]
            mask = torch.cat([mask, mask.new_ones((len(batch), 1))], dim=1)  # (B, T+1)
            pos = pos + 1
            out = net.model(input_ids=tokens[:, None], attention_mask=mask, position_ids=pos,
                            use_cache=True, **{net.cache_arg: cache})
            logits = out.logits[:, -1]
        return samples

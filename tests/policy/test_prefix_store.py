"""The prefix store: a turn's prefill starts where the last one stopped, with the tokens
and log-probs of a sampler without it, and never outlives the weights it was made by."""

import torch

from tracerl.policy.prefix_store import MIN_REUSE, PrefixStore
from tracerl.policy.sampler import SamplingParams, TransformersSampler
from tracerl.train.optim import adamw

PARAMS = SamplingParams(temperature=0.0, max_new_tokens=8)


def _prompts(policy, n):
    tok = policy.tokenizer
    return [tok.encode(f"<|im_start|>system\nYou add numbers with the tools. Task {i}: "
                       f"{'7+' * (i + 3)}1<|im_end|>\n<|im_start|>assistant\n",
                       add_special_tokens=False) for i in range(n)]


def _episode(policy, sampler, prompts, turns=3, change=None, params=PARAMS):
    """Multi-turn contexts as the runner builds them: each turn's context is the last
    one, what was sampled and an observation. `change(turn)` may touch the weights."""
    tok = policy.tokenizer
    contexts, out = [list(p) for p in prompts], []
    for turn in range(turns):
        if change is not None:
            change(turn)
        samples = sampler.generate(contexts, params)
        out.append([(s.ids, s.logprobs) for s in samples])
        contexts = [c + s.ids + tok.encode(f"<|im_end|>\n<|im_start|>user\nresult {turn}"
                                           f"<|im_end|>\n<|im_start|>assistant\n",
                                           add_special_tokens=False)
                    for c, s in zip(contexts, samples, strict=True)]
    return out


def _positions_run(policy):
    """Decoder positions each prefill-sized call runs (decoding steps are width 1)."""
    calls = []
    hook = policy.model.get_decoder().register_forward_pre_hook(
        lambda _m, _a, kw: calls.append(kw["input_ids"].numel())
        if kw["input_ids"].shape[1] > 1 else None, with_kwargs=True)
    return calls, hook


def _assert_same(got, want):
    for turn_got, turn_want in zip(got, want, strict=True):
        for (ids, lps), (ids2, lps2) in zip(turn_got, turn_want, strict=True):
            assert ids == ids2
            torch.testing.assert_close(torch.tensor(lps), torch.tensor(lps2), atol=1e-4, rtol=0)


def test_later_turns_prefill_only_what_is_new_and_sample_the_same(tiny_policy):
    prompts = _prompts(tiny_policy, 4)
    plain = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, prefix_cache_mb=0)
    stored = TransformersSampler(tiny_policy.model, tiny_policy.pad_id)
    calls, hook = _positions_run(tiny_policy)
    try:
        want = _episode(tiny_policy, plain, prompts)
        without = sum(calls)
        calls.clear()
        got = _episode(tiny_policy, stored, prompts)
    finally:
        hook.remove()
    _assert_same(got, want)
    assert stored.prefix_store.reused_tokens > 2 * sum(map(len, prompts))
    assert sum(calls) < 0.6 * without
    assert len(stored.prefix_store) == len(prompts)  # each turn's entry replaced its last


def test_a_group_sharing_a_prompt_reuses_it_on_every_turn(tiny_policy):
    """Groups of one prompt sampled apart (temperature 1, one seed for both samplers):
    from turn 2 each row extends its own stored context, beyond the group's prompt."""
    prompts = [_prompts(tiny_policy, 2)[1]] * 4 + [_prompts(tiny_policy, 1)[0]] * 3
    params = SamplingParams(temperature=1.0, max_new_tokens=8)
    plain = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=0,
                                prefix_cache_mb=0)
    stored = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=0)
    got = _episode(tiny_policy, stored, prompts, params=params)
    _assert_same(got, _episode(tiny_policy, plain, prompts, params=params))
    assert len({tuple(ids) for ids, _ in got[0][:4]}) > 1  # the group did diverge
    assert stored.prefix_store.reused_tokens > sum(map(len, prompts))


def test_changed_weights_empty_the_store(fresh_tiny_policy):
    """An optimiser-like in-place update between turns: the stored prefixes were made by
    the old weights, so turn 2 must match a sampler that never stored anything."""
    policy = fresh_tiny_policy
    prompts = _prompts(policy, 3)
    layer = policy.model.get_decoder().layers[0].self_attn.q_proj.weight
    original = layer.detach().clone()

    def bump(turn):
        if turn == 1:
            with torch.no_grad():
                layer.mul_(3.0)

    stored = TransformersSampler(policy.model, policy.pad_id)
    got = _episode(policy, stored, prompts, change=bump)
    with torch.no_grad():
        layer.copy_(original)
    plain = TransformersSampler(policy.model, policy.pad_id, prefix_cache_mb=0)
    want = _episode(policy, plain, prompts, change=bump)
    _assert_same(got, want)
    # and the bump does change what is sampled: reusing stale entries would have shown
    with torch.no_grad():
        layer.copy_(original)
    unchanged = _episode(policy, TransformersSampler(policy.model, policy.pad_id,
                                                     prefix_cache_mb=0), prompts)
    assert [lp for _, lp in want[1]] != [lp for _, lp in unchanged[1]]


def test_a_fused_adamw_step_empties_the_store(fresh_tiny_policy):
    """The trainer's optimiser (tracerl.train.optim.adamw: fused AdamW) updates the
    weights without bumping a version counter; the store must notice it anyway."""
    policy = fresh_tiny_policy
    params = [p for p in policy.model.parameters() if p.requires_grad]
    original = [p.detach().clone() for p in params]
    loss = policy.model(input_ids=torch.tensor([[5, 6, 7, 8]])).logits.logsumexp(-1).mean()
    loss.backward()
    prompts = _prompts(policy, 3)

    def episode(sampler):
        opt = adamw(params, lr=0.05)  # fresh: the same first step both times
        assert opt.defaults.get("fused")
        versions = [p._version for p in params]
        out = _episode(policy, sampler, prompts, change=lambda t: opt.step() if t == 1 else 0)
        assert [p._version for p in params] == versions  # no version told of the step
        with torch.no_grad():
            for p, o in zip(params, original, strict=True):
                p.copy_(o)
        return out

    got = episode(TransformersSampler(policy.model, policy.pad_id))
    want = episode(TransformersSampler(policy.model, policy.pad_id, prefix_cache_mb=0))
    _assert_same(got, want)


def test_switching_the_adapter_off_empties_the_store(lora_policy):
    prompts = _prompts(lora_policy, 2)
    stored = TransformersSampler(lora_policy.model, lora_policy.pad_id)
    plain = TransformersSampler(lora_policy.model, lora_policy.pad_id, prefix_cache_mb=0)
    with_adapter = _episode(lora_policy, stored, prompts, turns=1)
    contexts = [p + ids for p, (ids, _) in zip(prompts, with_adapter[0], strict=True)]
    with lora_policy.model.disable_adapter():
        got = stored.generate(contexts, PARAMS)
        want = plain.generate(contexts, PARAMS)
    for a, b in zip(got, want, strict=True):
        assert a.ids == b.ids
        torch.testing.assert_close(torch.tensor(a.logprobs), torch.tensor(b.logprobs),
                                   atol=1e-4, rtol=0)


def _layers(n, value=1.0):
    return [(torch.full((2, n, 4), value), torch.full((2, n, 4), value)) for _ in range(3)]


def test_the_store_matches_the_longest_prefix_and_stays_within_its_bytes():
    per_position = 3 * 2 * 2 * 4 * 4  # layers x (k, v) x heads x head_dim x float32
    store = PrefixStore(max_bytes=100 * per_position)
    a = list(range(40))
    store.begin_call()
    assert store.put(a, _layers(40))
    assert store.match(a + [99, 98]) == (40, tuple(a))
    assert store.match(a[:MIN_REUSE - 1] + [7] * 30) == (0, None)  # too short to pay
    n, key = store.match(a[:30] + [7] * 30)
    assert n == 30 and [k.shape[1] for k, _ in store.get(key, n)] == [30, 30, 30]
    longer = a + list(range(100, 120))
    assert store.put(longer, _layers(60), extends=tuple(a))
    assert len(store) == 1 and store.nbytes == 60 * per_position  # the old entry went
    store.begin_call()
    assert store.put(list(range(500, 550)), _layers(50))
    assert len(store) == 1 and store.match(longer) == (0, None)  # LRU out at 110 > 100
    assert not store.put(list(range(1000, 1200)), _layers(200))  # larger than the store
    assert len(store) == 1
    store.clear()
    assert len(store) == 0 and store.nbytes == 0


def test_a_call_that_does_not_fit_keeps_what_it_stored_first():
    """Contexts of one call that need more room than the store has: the first stay and
    the rest are not stored (evicting them for each other would leave nothing for the
    next call), while a later call may evict what earlier calls used."""
    per_position = 3 * 2 * 2 * 4 * 4
    store = PrefixStore(max_bytes=100 * per_position)
    rows = [list(range(1000 * i, 1000 * i + 40)) for i in range(4)]
    store.begin_call()
    room = []
    stored = []
    for r in rows:
        room.append(store.room_for(r, 40 * per_position))
        stored.append(store.put(r, _layers(40)))
    assert stored == [True, True, False, False]
    assert room == stored  # asked first, so the sampler copies nothing it cannot keep
    store.begin_call()  # the next turn: the first two extend themselves, the rest miss
    for r in rows[:2]:
        n, key = store.match(r + [1, 2, 3])
        assert n == 40 and store.put(r + [1, 2], _layers(42), extends=key)
    assert [store.match(r + [1, 2, 5])[0] for r in rows] == [42, 42, 0, 0]
    store.begin_call()  # a new call with other contexts may evict the old ones
    assert store.put(list(range(9000, 9090)), _layers(90))
    assert len(store) == 1


def test_the_config_sizes_the_runs_store(tiny_policy):
    import pytest

    from tracerl.train import configlib
    from tracerl.train.config import TrainConfig
    from tracerl.train.runner import build_sampler

    with pytest.raises(configlib.ConfigError, match="prefix_cache_mb"):
        configlib.load(TrainConfig, None, ["sampler.prefix_cache_mb=-1"])
    cfg = configlib.load(TrainConfig, None, ["sampler.prefix_cache_mb=3"])
    assert build_sampler(cfg, tiny_policy).prefix_store.max_bytes == 3 * 2**20
    off = configlib.load(TrainConfig, None, ["sampler.prefix_cache_mb=0"])
    assert build_sampler(off, tiny_policy).prefix_store.max_bytes == 0

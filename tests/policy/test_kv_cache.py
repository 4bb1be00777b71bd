"""The sampler's growing KV cache and its inverse-CDF token draw: the same tokens and
log-probs as transformers' DynamicCache, and draws distributed as the weights say."""

import pytest
import torch
from transformers import DynamicCache

import tracerl.policy.sampler as sampler_module
from tracerl.policy.kv_cache import GrowingLayer, growing_cache
from tracerl.policy.sampler import TransformersSampler, draw
from tracerl.policy.sampling import SamplingParams


def _kv(rows: int, length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    shape = (rows, 2, length, 4)
    return torch.randn(shape, generator=g), torch.randn(shape, generator=g)


def test_a_growing_layer_holds_what_concatenation_would():
    layer, keys, values = GrowingLayer(spare=3), [], []
    for step, length in enumerate([5, 1, 1, 4, 1, 9, 1]):  # grows past its room 3 times
        k, v = _kv(3, length, step)
        got_k, got_v = layer.update(k, v)
        keys.append(k)
        values.append(v)
        torch.testing.assert_close(got_k, torch.cat(keys, dim=-2), rtol=0, atol=0)
        torch.testing.assert_close(got_v, torch.cat(values, dim=-2), rtol=0, atol=0)
    assert layer.get_seq_length() == 22
    want_k = torch.cat(keys, dim=-2)
    layer.batch_select_indices(torch.tensor([2, 0]))
    torch.testing.assert_close(layer.keys, want_k[[2, 0]], rtol=0, atol=0)
    layer.batch_repeat_interleave(2)
    torch.testing.assert_close(layer.keys, want_k[[2, 2, 0, 0]], rtol=0, atol=0)
    layer.crop(-5)
    assert layer.get_seq_length() == 17 and layer.keys.shape[-2] == 17
    k, v = _kv(4, 1, 99)  # writes after the crop land where the cropped positions were
    got_k, _ = layer.update(k, v)
    torch.testing.assert_close(got_k[..., -1:, :], k, rtol=0, atol=0)
    with pytest.raises(ValueError, match="negative"):
        layer.crop(3)


@pytest.mark.parametrize("room", [1, 64])
def test_sampling_with_the_growing_cache_matches_the_dynamic_cache(tiny_policy, monkeypatch,
                                                                   room):
    tok = tiny_policy.tokenizer
    contexts = [tok.encode(f"<|im_start|>user\n{'ab' * (i + 1)} {i}<|im_end|>\n"
                           "<|im_start|>assistant\n", add_special_tokens=False)
                for i in range(6)]
    contexts += [contexts[0]] * 3  # a shared prefix expanded into several rows
    budgets = [3, 17, 5, 40, 9, 2, 40, 11, 1]  # rows finish at different steps: compaction
    params = SamplingParams(temperature=0.0, max_new_tokens=40)
    # room 1: the cache grows again and again while decoding; 64: room from the start
    monkeypatch.setattr(sampler_module, "growing_cache", lambda spare=0: growing_cache(room))
    ours = TransformersSampler(tiny_policy.model, tiny_policy.pad_id).generate(
        contexts, params, budgets)
    monkeypatch.setattr(sampler_module, "growing_cache", lambda spare=0: DynamicCache())
    theirs = TransformersSampler(tiny_policy.model, tiny_policy.pad_id).generate(
        contexts, params, budgets)
    for a, b, n in zip(ours, theirs, budgets, strict=True):
        assert a.ids == b.ids and len(a.ids) <= n
        torch.testing.assert_close(torch.tensor(a.logprobs), torch.tensor(b.logprobs),
                                   atol=1e-5, rtol=0)


def test_draws_follow_the_weights_and_never_pick_a_weightless_token():
    weights = torch.tensor([[0.0, 5.0, 3.0, 0.0, 2.0, 0.0]] * 4000)  # unnormalised
    gen = torch.Generator().manual_seed(0)
    counts = torch.bincount(torch.cat([draw(weights, gen) for _ in range(5)]), minlength=6)
    assert counts[[0, 3, 5]].sum() == 0
    freq = counts.double() / counts.sum()
    torch.testing.assert_close(freq[[1, 2, 4]], torch.tensor([0.5, 0.3, 0.2], dtype=freq.dtype),
                               atol=0.01, rtol=0)
    again = draw(weights[:50], torch.Generator().manual_seed(7))
    assert again.tolist() == draw(weights[:50], torch.Generator().manual_seed(7)).tolist()


def test_a_draw_that_rounds_onto_the_total_takes_the_likeliest_token(monkeypatch):
    weights = torch.tensor([[0.2, 0.7, 0.1, 0.0, 0.0]])
    monkeypatch.setattr(torch, "rand", lambda *a, **k: torch.ones(1, 1, dtype=torch.float64))
    assert draw(weights, None).tolist() == [1]


def test_a_turn_allocates_each_layer_once(tiny_policy, monkeypatch):
    """The prefix pass sizes every layer for the suffix pass and the whole turn's
    decoding, so nothing is copied to grow the cache afterwards."""
    grows = []
    real = GrowingLayer._grow
    monkeypatch.setattr(GrowingLayer, "_grow",
                        lambda self, *a: (grows.append(id(self)), real(self, *a)))
    tok = tiny_policy.tokenizer
    prompt = tok.encode("<|im_start|>user\nwhat is 3 + 4?<|im_end|>\n<|im_start|>assistant\n",
                        add_special_tokens=False)
    contexts = [prompt] * 3 + [prompt + tok.encode(f"{'z' * 9 * i}", add_special_tokens=False)
                               for i in range(1, 4)]
    TransformersSampler(tiny_policy.model, tiny_policy.pad_id).generate(
        contexts, SamplingParams(temperature=0.0, max_new_tokens=30))
    layers = tiny_policy.model.config.num_hidden_layers
    assert len(grows) == len(set(grows)) == layers

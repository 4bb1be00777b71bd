"""Decoding attention: its own case against transformers' SDPA, and everything else passed on."""

import pytest
import torch
from transformers import Gemma3ForCausalLM, Gemma3TextConfig, Qwen3Config, Qwen3ForCausalLM
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from tracerl.policy.attention import DECODE_ATTENTION, decode_attention, use_decode_attention
from tracerl.policy.kv_cache import growing_cache


class _Module(torch.nn.Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.num_key_value_groups = groups
        self.is_causal = True


def _inputs(dtype, q_len=1, batch=3, heads=6, kv=2, length=40, dim=16, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(batch, heads, q_len, dim, generator=gen).to(dtype)
    k = torch.randn(batch, kv, length, dim, generator=gen).to(dtype)
    v = torch.randn(batch, kv, length, dim, generator=gen).to(dtype)
    mask = torch.ones(batch, 1, q_len, length, dtype=torch.bool)
    mask[1, :, :, :9] = False  # a left-padded row
    mask[2, :, :, :3] = False
    return q, k, v, mask


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("masked", [True, False])
def test_one_position_matches_sdpa_in_16_bit(dtype, masked):
    q, k, v, mask = _inputs(dtype)
    mask = mask if masked else None
    module = _Module(groups=3)
    got, _ = decode_attention(module, q, k, v, mask, scaling=0.3)
    want, _ = sdpa_attention_forward(module, q, k, v, mask, scaling=0.3)
    exact, _ = sdpa_attention_forward(module, q.float(), k.float(), v.float(), mask,
                                      scaling=0.3)
    assert got.shape == want.shape == (3, 1, 6, 16) and got.dtype == dtype
    # as close to the float32 result as SDPA's own 16-bit kernel is
    tol = 2 * (want.float() - exact).abs().max() + 1e-3
    assert (got.float() - exact).abs().max() <= tol


def test_padded_keys_get_no_weight():
    q, k, v, mask = _inputs(torch.bfloat16)
    module = _Module(groups=3)
    got, _ = decode_attention(module, q, k, v, mask)
    k2, v2 = k.clone(), v.clone()
    k2[1, :, :9] = 50.0  # what padding holds must not matter
    v2[1, :, :9] = -50.0
    again, _ = decode_attention(module, q, k2, v2, mask)
    assert torch.equal(got, again)


def test_keys_in_a_buffer_with_spare_room():
    """The KV cache hands attention views of buffers longer than what they hold."""
    q, k, v, mask = _inputs(torch.bfloat16)
    spare_k = torch.zeros(3, 2, 64, 16, dtype=torch.bfloat16)
    spare_v = torch.zeros(3, 2, 64, 16, dtype=torch.bfloat16)
    spare_k[:, :, :40], spare_v[:, :, :40] = k, v
    module = _Module(groups=3)
    a, _ = decode_attention(module, q, k, v, mask)
    b, _ = decode_attention(module, q, spare_k[:, :, :40], spare_v[:, :, :40], mask)
    assert torch.equal(a, b)


@pytest.mark.parametrize("case", ["float32", "prefill", "dropout", "softcap", "float_mask"])
def test_other_calls_are_sdpas_own(case):
    dtype = torch.float32 if case == "float32" else torch.bfloat16
    q, k, v, mask = _inputs(dtype, q_len=4 if case == "prefill" else 1)
    kwargs = {}
    if case == "float_mask":
        mask = torch.zeros(mask.shape, dtype=dtype).masked_fill(~mask, float("-inf"))
    module = _Module(groups=3)
    if case == "softcap":  # SDPA refuses it: so must we, rather than ignore it
        with pytest.raises(ValueError, match="softcap"):
            decode_attention(module, q, k, v, mask, softcap=30.0)
        return
    if case == "dropout":
        kwargs["dropout"] = 0.5
    torch.manual_seed(0)
    got, _ = decode_attention(module, q, k, v, mask, **kwargs)
    torch.manual_seed(0)
    want, _ = sdpa_attention_forward(module, q, k, v, mask, **kwargs)
    assert torch.equal(got, want)


def _decode_logprobs(model, ids, mask):
    """Log-probabilities of the last token's successor, decoded with a cache."""
    cache = growing_cache(spare=4)
    with torch.no_grad():
        model(input_ids=ids[:, :-1], attention_mask=mask[:, :-1], past_key_values=cache,
              use_cache=True)
        out = model(input_ids=ids[:, -1:], attention_mask=mask, past_key_values=cache,
                    use_cache=True)
    return out.logits[:, -1].float().log_softmax(-1)


@pytest.mark.parametrize("arch", ["qwen3", "gemma3"])
def test_a_bfloat16_model_decodes_as_with_sdpa(arch):
    """GQA (Qwen3) and sliding-window layers with a window shorter than the context
    (Gemma 3): the decoded token's distribution is SDPA's to bfloat16 rounding."""
    torch.manual_seed(0)
    if arch == "qwen3":
        cfg = Qwen3Config(vocab_size=96, hidden_size=64, intermediate_size=128,
                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                          max_position_embeddings=256)
        model = Qwen3ForCausalLM(cfg)
    else:
        cfg = Gemma3TextConfig(vocab_size=96, hidden_size=64, intermediate_size=128,
                               num_hidden_layers=4, num_attention_heads=4,
                               num_key_value_heads=1, head_dim=16, sliding_window=6,
                               layer_types=["sliding_attention", "full_attention"] * 2,
                               max_position_embeddings=256)
        model = Gemma3ForCausalLM(cfg)
    model = model.to(torch.bfloat16).eval()
    ids = torch.randint(0, 96, (3, 30))
    mask = torch.ones(3, 30, dtype=torch.long)
    mask[1, :8] = 0
    want = _decode_logprobs(model, ids, mask)
    exact = _decode_logprobs(model.float(), ids, mask)
    model = model.to(torch.bfloat16)
    use_decode_attention(model)
    assert model.config._attn_implementation == DECODE_ATTENTION
    got = _decode_logprobs(model, ids, mask)
    assert (got - exact).abs().max() <= 2 * (want - exact).abs().max() + 0.02


def test_only_sdpa_models_are_switched(tmp_path):
    cfg = Qwen3Config(vocab_size=32, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1)
    eager = Qwen3ForCausalLM._from_config(cfg, attn_implementation="eager")
    use_decode_attention(eager)
    assert eager.config._attn_implementation == "eager"
    model = Qwen3ForCausalLM._from_config(cfg, attn_implementation="sdpa")
    use_decode_attention(model)
    assert model.config._attn_implementation == DECODE_ATTENTION
    model.save_pretrained(tmp_path)  # a saved model does not name our implementation
    assert DECODE_ATTENTION not in (tmp_path / "config.json").read_text()

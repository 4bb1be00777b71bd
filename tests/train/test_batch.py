import pytest
import torch

from tracerl.train.batch import token_logprobs


def full_logits_logprobs(model, input_ids, attention_mask, temperature=1.0):
    """The reference: full (B, L, V) float32 logits at once (the old implementation)."""
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1].float()
    if temperature not in (0.0, 1.0):
        logits = logits / temperature
    picked = logits.gather(-1, input_ids[:, 1:, None]).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)


def _batch():
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(4, 90, (3, 21), generator=gen)
    mask = torch.ones_like(ids)
    mask[1, 15:] = 0  # right padding
    weights = torch.randn(3, 20, generator=gen)  # a loss that weighs every position
    return ids, mask, weights


def _grads(model, logp_fn, **kwargs):
    ids, mask, weights = _batch()
    model.zero_grad(set_to_none=True)
    logp = logp_fn(model, ids, mask, **kwargs)
    (logp * weights).sum().backward()
    return logp.detach(), [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("chunk", [1, 7, 16, 60, 256])
@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_chunked_logprobs_equal_full_logits_in_values_and_gradients(fresh_tiny_policy, chunk,
                                                                    temperature):
    model = fresh_tiny_policy.model
    want, want_grads = _grads(model, full_logits_logprobs, temperature=temperature)
    got, got_grads = _grads(model, token_logprobs, temperature=temperature, chunk=chunk)
    torch.testing.assert_close(got, want, atol=1e-5, rtol=0)
    for g, w in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-4)


def test_without_gradients_the_chunks_give_the_same_values(tiny_policy):
    ids, mask, _ = _batch()
    with torch.no_grad():
        torch.testing.assert_close(token_logprobs(tiny_policy.model, ids, mask, chunk=5),
                                   full_logits_logprobs(tiny_policy.model, ids, mask),
                                   atol=1e-5, rtol=0)


def test_a_one_token_sequence_predicts_nothing(tiny_policy):
    ids = torch.tensor([[5], [6]])
    assert token_logprobs(tiny_policy.model, ids, torch.ones_like(ids)).shape == (2, 0)

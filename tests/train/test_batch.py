import pytest
import torch

from tracerl.train import batch as batch_module
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


def _group_batch(policy, gen):
    """Rows in groups sharing prompts of different lengths, ragged responses, right padding,
    and a loss mask with holes (observation tokens)."""
    prompts = [torch.randint(4, 90, (n,), generator=gen).tolist() for n in (9, 5, 12)]
    rows, plens = [], []
    for g, size in zip(prompts, (3, 1, 2), strict=True):
        for _ in range(size):
            resp = torch.randint(4, 90, (int(torch.randint(2, 11, (1,), generator=gen)),),
                                 generator=gen).tolist()
            rows.append(g + resp)
            plens.append(len(g))
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), policy.pad_id)
    mask = torch.zeros_like(ids)
    where = torch.zeros((len(rows), width - 1), dtype=torch.bool)
    for i, (r, p) in enumerate(zip(rows, plens, strict=True)):
        ids[i, :len(r)] = torch.tensor(r)
        mask[i, :len(r)] = 1
        where[i, p - 1:len(r) - 1] = True
        where[i, p + 1] = False  # an observation token inside the response
    return ids, mask, where, torch.tensor(plens)


@pytest.mark.parametrize("select", [True, False])
@pytest.mark.parametrize("chunk", [None, 4])
def test_shared_prompts_and_wanted_positions_change_no_value_or_gradient(
        fresh_tiny_policy, chunk, select, monkeypatch):
    """Each group's prompt run once and only the loss positions projected (`select`: as
    for a large vocabulary) or all projected and masked: the same log-probs and gradients
    as the plain pass over every position."""
    monkeypatch.setattr(batch_module, "SELECT_MIN_VOCAB", 0 if select else 10**9)
    model = fresh_tiny_policy.model
    ids, mask, where, plens = _group_batch(fresh_tiny_policy, torch.Generator().manual_seed(1))
    weights = torch.randn(where.shape, generator=torch.Generator().manual_seed(2)) * where
    calls = []
    hook = model.get_decoder().register_forward_pre_hook(
        lambda _m, _a, kw: calls.append(kw["input_ids"].shape[0]), with_kwargs=True)

    def run(**kwargs):
        model.zero_grad(set_to_none=True)
        logp = token_logprobs(model, ids, mask, 0.7, chunk, **kwargs)
        (logp * weights).sum().backward()
        return logp.detach(), [p.grad.clone() for p in model.parameters()]

    try:
        want, want_grads = run()
        want = want * where
        assert calls == [6]
        got, got_grads = run(where=where, prompt_lens=plens)
    finally:
        hook.remove()
    assert calls == [6, 3, 6]  # three distinct prompts, then the six responses
    assert torch.all(got[~where] == 0)
    torch.testing.assert_close(got, want, atol=2e-5, rtol=0)
    for g, w in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(g, w, atol=2e-5, rtol=2e-4)


def test_rows_of_different_tasks_share_their_system_prompt(fresh_tiny_policy):
    """Distinct prompts (as in an SFT batch) that open with the same system prompt: the
    system prompt runs once for all rows, and log-probs and gradients are the plain
    pass's."""
    model = fresh_tiny_policy.model
    gen = torch.Generator().manual_seed(3)
    system = torch.randint(4, 90, (14,), generator=gen).tolist()
    rows = [system + torch.randint(4, 90, (n,), generator=gen).tolist() for n in (3, 6, 2, 5)]
    plens = [len(r) for r in rows]
    rows = [r + torch.randint(4, 90, (k,), generator=gen).tolist()
            for r, k in zip(rows, (4, 7, 3, 6), strict=True)]
    width = max(len(r) for r in rows)
    ids = torch.full((4, width), fresh_tiny_policy.pad_id)
    mask = torch.zeros_like(ids)
    where = torch.zeros((4, width - 1), dtype=torch.bool)
    for i, (r, p) in enumerate(zip(rows, plens, strict=True)):
        ids[i, :len(r)], mask[i, :len(r)] = torch.tensor(r), 1
        where[i, p - 1:len(r) - 1] = True
    weights = torch.randn(where.shape, generator=gen) * where
    widths = []
    hook = model.get_decoder().register_forward_pre_hook(
        lambda _m, _a, kw: widths.append(tuple(kw["input_ids"].shape)), with_kwargs=True)

    def run(**kwargs):
        model.zero_grad(set_to_none=True)
        logp = token_logprobs(model, ids, mask, **kwargs) * where
        (logp * weights).sum().backward()
        return logp.detach(), [p.grad.clone() for p in model.parameters()]

    try:
        want, want_grads = run()
        got, got_grads = run(where=where, prompt_lens=torch.tensor(plens))
    finally:
        hook.remove()
    assert widths[1] == (1, len(system))  # the system prompt, once
    assert widths[2][0] == 4 and widths[2][1] == width - len(system)
    torch.testing.assert_close(got, want, atol=2e-5, rtol=0)
    for g, w in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(g, w, atol=2e-5, rtol=2e-4)



@pytest.mark.slow  # Gemma 3 270M: 262,144 tokens, tied embeddings scaled in the decoder
def test_gemma3_chunked_logprobs_equal_its_own_logits(gemma3_dir):
    from tracerl.policy.model import load_policy

    policy = load_policy(gemma3_dir)
    tok, model = policy.tokenizer, policy.model.eval()
    chat = [{"role": "user", "content": "What is 2 + 3?"}, {"role": "assistant", "content": "5"}]
    ids = torch.tensor([tok.encode(tok.apply_chat_template(chat, tokenize=False),
                                   add_special_tokens=False)])
    mask = torch.ones_like(ids)
    with torch.no_grad():
        want = full_logits_logprobs(model, ids, mask)
        got = token_logprobs(model, ids, mask, chunk=5)  # several chunks of the vocabulary
    assert batch_module.LOGITS_PER_CHUNK // model.config.vocab_size == 48
    torch.testing.assert_close(got, want, atol=1e-4, rtol=0)

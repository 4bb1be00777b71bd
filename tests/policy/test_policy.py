import pytest
import torch

from tracerl.policy.model import load_policy
from tracerl.policy.sampler import SamplingParams, TransformersSampler
from tracerl.policy.tokenizer import build_char_tokenizer


def test_char_tokenizer_round_trips_text_and_special_tokens():
    tok = build_char_tokenizer()
    text = '<|im_start|>user\nCompute (12*3).<|im_end|>\n<tool_call>{"a": 1}</tool_call>'
    ids = tok.encode(text, add_special_tokens=False)
    assert tok.decode(ids) == text
    assert ids[0] == tok.convert_tokens_to_ids("<|im_start|>")
    assert tok.convert_tokens_to_ids("<tool_call>") in ids


def test_chat_template_renders_chatml_with_generation_prompt():
    tok = build_char_tokenizer()
    out = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                  add_generation_prompt=True)
    assert out == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_load_policy_names_a_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        load_policy(tmp_path / "absent")


def test_tiny_policy_is_a_plain_transformers_model(tiny_policy):
    assert type(tiny_policy.model).__name__ == "LlamaForCausalLM"
    assert tiny_policy.stop_ids == tuple(
        tiny_policy.tokenizer.convert_tokens_to_ids(["</tool_call>", "<|im_end|>"]))


def _contexts(policy, n=6):
    base = policy.tokenizer.encode("<|im_start|>user\nCompute (1*2).<|im_end|>\n"
                                   "<|im_start|>assistant\n", add_special_tokens=False)
    return [base[: len(base) - i] for i in range(n)]  # ragged lengths -> left padding


def test_recorded_logprobs_match_a_full_forward_pass(tiny_policy):
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=0)
    contexts = _contexts(tiny_policy)
    samples = sampler.generate(contexts, SamplingParams(temperature=0.7, max_new_tokens=12,
                                                        stop_ids=tiny_policy.stop_ids))
    for ctx, s in zip(contexts, samples, strict=True):
        full = torch.tensor([ctx + s.ids])
        with torch.no_grad():
            logits = tiny_policy.model(full).logits[0, len(ctx) - 1:-1] / 0.7
        ref = torch.log_softmax(logits, -1).gather(-1, torch.tensor(s.ids)[:, None]).squeeze(-1)
        assert torch.allclose(ref, torch.tensor(s.logprobs), atol=1e-4)


def test_a_group_of_identical_contexts_is_prefilled_once_and_sampled_apart(tiny_policy):
    """G copies of a prompt share one prefill; each copy is still its own draw, with the
    log-probs of a full forward pass."""
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=0)
    first, second = _contexts(tiny_policy, 2)
    contexts = [first] * 4 + [second] * 3 + [first]
    calls = []
    hook = tiny_policy.model.get_decoder().register_forward_pre_hook(
        lambda _m, _a, kw: calls.append(kw["input_ids"].shape), with_kwargs=True)
    try:
        samples = sampler.generate(contexts, SamplingParams(
            temperature=1.0, max_new_tokens=16, stop_ids=tiny_policy.stop_ids))
    finally:
        hook.remove()
    assert calls[0][0] <= 2  # at most one row per distinct prompt in the prefix pass
    assert calls[1][0] == len(contexts) and calls[1][1] <= 2  # then each row's last tokens
    assert len({tuple(s.ids) for s in samples}) > 2  # the copies did not share draws
    for ctx, s in zip(contexts, samples, strict=True):
        full = torch.tensor([ctx + s.ids])
        with torch.no_grad():
            logits = tiny_policy.model(full).logits[0, len(ctx) - 1:-1]
        ref = torch.log_softmax(logits, -1).gather(-1, torch.tensor(s.ids)[:, None]).squeeze(-1)
        assert torch.allclose(ref, torch.tensor(s.logprobs), atol=1e-4)


def test_budgets_and_stops_are_respected(tiny_policy):
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=1)
    contexts = _contexts(tiny_policy)
    budgets = [1, 2, 3, 4, 5, 6]
    samples = sampler.generate(contexts, SamplingParams(max_new_tokens=6,
                                                        stop_ids=tiny_policy.stop_ids), budgets)
    for s, b in zip(samples, budgets, strict=True):
        assert len(s.ids) <= b
        stops = [i for i in s.ids if i in tiny_policy.stop_ids]
        assert (s.finish == "stop") == bool(stops)
        if stops:
            assert s.ids[-1] in tiny_policy.stop_ids and len(stops) == 1
        else:
            assert len(s.ids) == b


def test_greedy_is_deterministic_and_matches_argmax(tiny_policy):
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id)
    ctx = _contexts(tiny_policy, 2)
    p = SamplingParams(temperature=0.0, max_new_tokens=5)
    a, b = sampler.generate(ctx, p), sampler.generate(ctx, p)
    assert [s.ids for s in a] == [s.ids for s in b]
    with torch.no_grad():
        first = tiny_policy.model(torch.tensor([ctx[0]])).logits[0, -1].argmax().item()
    assert a[0].ids[0] == first


def test_top_p_keeps_only_the_nucleus(tiny_policy):
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=3)
    ctx = _contexts(tiny_policy, 1) * 64
    samples = sampler.generate(ctx, SamplingParams(top_p=1e-6, max_new_tokens=1))
    assert len({s.ids[0] for s in samples}) == 1  # only the most likely token survives


def test_bad_sampling_params_are_named():
    with pytest.raises(ValueError, match="top_p"):
        SamplingParams(top_p=0.0)
    with pytest.raises(ValueError, match="temperature"):
        SamplingParams(temperature=-1)


def test_each_sample_reports_the_entropy_it_was_drawn_from(tiny_policy):
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=3)
    contexts = _contexts(tiny_policy, 3)
    samples = sampler.generate(contexts, SamplingParams(temperature=0.7, max_new_tokens=8,
                                                        stop_ids=tiny_policy.stop_ids))
    for ctx, s in zip(contexts, samples, strict=True):
        with torch.no_grad():
            logits = tiny_policy.model(torch.tensor([ctx + s.ids])).logits[0, len(ctx) - 1:-1]
        logp = torch.log_softmax(logits / 0.7, -1)
        want = float(-(logp.exp() * logp).sum())
        assert s.entropy == pytest.approx(want, rel=1e-3)


def test_rows_sharing_a_prompt_sample_as_if_prefilled_alone(tiny_policy):
    """Multi-turn contexts (a group's prompt, then each row's own turns): the prompt is
    prefilled once for the group, and each row's tokens and log-probs are those it gets
    prefilled alone."""
    first, second = _contexts(tiny_policy, 2)
    tok = tiny_policy.tokenizer
    contexts = [p + tok.encode(f"{'x' * (i + 1)}<|im_end|>\n<|im_start|>user\n{i * 37}"
                               "<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)
                for p in (first, second) for i in range(3)]
    params = SamplingParams(temperature=0.0, max_new_tokens=10)
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id)
    calls = []
    hook = tiny_policy.model.get_decoder().register_forward_pre_hook(
        lambda _m, _a, kw: calls.append(kw["input_ids"].shape), with_kwargs=True)
    try:
        together = sampler.generate(contexts, params)
    finally:
        hook.remove()
    assert calls[0][0] < len(contexts)  # shared prefixes ran once
    padded = calls[0][0] * calls[0][1] + calls[1][0] * calls[1][1]
    assert padded < 0.7 * len(contexts) * max(len(c) for c in contexts)
    for ctx, s in zip(contexts, together, strict=True):
        alone = sampler.generate([ctx], params)[0]
        assert s.ids == alone.ids
        torch.testing.assert_close(torch.tensor(s.logprobs), torch.tensor(alone.logprobs),
                                   atol=1e-4, rtol=0)


def test_a_lora_prefill_projects_only_the_last_positions(lora_policy):
    """With an adapter the prefill runs the decoder, then the output layer on each row's
    last hidden state alone (a whole-model call with logits_to_keep made peft copy the
    output weight once per row), and the log-probs are a full forward pass's."""
    contexts = _contexts(lora_policy, 3)
    shapes = []
    head = lora_policy.model.get_output_embeddings()
    hook = head.register_forward_pre_hook(lambda _m, args: shapes.append(tuple(args[0].shape)))
    try:
        samples = TransformersSampler(lora_policy.model, lora_policy.pad_id, seed=0).generate(
            contexts, SamplingParams(max_new_tokens=4))
    finally:
        hook.remove()
    assert shapes[0] == (3, head.in_features)
    for ctx, s in zip(contexts, samples, strict=True):
        with torch.no_grad():
            logits = lora_policy.model(torch.tensor([ctx + s.ids])).logits[0, len(ctx) - 1:-1]
        ref = torch.log_softmax(logits, -1).gather(-1, torch.tensor(s.ids)[:, None]).squeeze(-1)
        assert torch.allclose(ref, torch.tensor(s.logprobs), atol=1e-4)

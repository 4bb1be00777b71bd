"""Stop strings in the transformers sampler: a turn ends once its decoded text completes
a stop string, however many tokens spell it; one-token stop ids stay the fast path."""

from types import SimpleNamespace

import pytest
import torch

from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams

STOPS = ("</tool_call>", "<|im_end|>")


class ScriptModel(torch.nn.Module):
    """Emits a fixed token script, indexed by position after a context of `start` tokens."""

    def __init__(self, script: list[int], vocab: int, start: int) -> None:
        super().__init__()
        self.script, self.vocab, self.start = script, vocab, start
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def forward(self, input_ids, attention_mask, position_ids, use_cache, cache):
        step = position_ids[:, -1] - (self.start - 1)  # (B,)
        logits = torch.full((input_ids.shape[0], input_ids.shape[1], self.vocab), -1e9)
        for row, s in enumerate(step.tolist()):
            logits[row, -1, self.script[min(s, len(self.script) - 1)]] = 0.0
        return SimpleNamespace(logits=logits)


def _sample(tok, text, params):
    script = tok.encode(text, add_special_tokens=False)
    context = tok.encode("<|im_start|>assistant\n", add_special_tokens=False)
    model = ScriptModel(script, len(tok), len(context))
    sampler = TransformersSampler(model, pad_id=0, tokenizer=tok)
    return script, sampler.generate([context, context], params)


@pytest.mark.parametrize("name", [
    "spelt", "tiny", pytest.param("smollm2", marks=pytest.mark.slow)])
def test_a_stop_string_ends_the_turn_whatever_its_tokenization(chat_tokenizer, name):
    tok = chat_tokenizer(name)
    call = '<tool_call>{"name": "calculator", "arguments": {"expression": "2*3"}}</tool_call>'
    script, samples = _sample(tok, call + " and more text", SamplingParams(
        temperature=0.0, max_new_tokens=120, stop_strings=STOPS))
    n = len(tok.encode(call, add_special_tokens=False))
    for s in samples:
        assert s.finish == "stop" and s.ids == script[:n]
        assert tok.decode(s.ids).endswith("</tool_call>")


def test_stop_strings_spelt_in_many_tokens_need_them(chat_tokenizer):
    tok = chat_tokenizer("spelt")
    assert len(tok.encode("</tool_call>", add_special_tokens=False)) == 12
    _, samples = _sample(tok, "<tool_call>{}</tool_call> then more", SamplingParams(
        temperature=0.0, max_new_tokens=30))
    assert all(s.finish == "length" and len(s.ids) == 30 for s in samples)


def test_stop_ids_still_stop_without_decoding(chat_tokenizer):
    tok = chat_tokenizer("tiny")
    end = tok.convert_tokens_to_ids("<|im_end|>")
    _, samples = _sample(tok, "Answer: 6<|im_end|>more", SamplingParams(
        temperature=0.0, max_new_tokens=40, stop_ids=(end,), stop_strings=STOPS))
    assert all(s.finish == "stop" and s.ids[-1] == end for s in samples)


def test_stop_strings_need_the_tokenizer(tiny_policy):
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id)
    with pytest.raises(ValueError, match="tokenizer"):
        sampler.generate([[1, 2]], SamplingParams(stop_strings=STOPS))


def test_on_token_sees_every_sampled_token_of_every_row(tiny_policy):
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, seed=0,
                                  tokenizer=tiny_policy.tokenizer)
    seen: dict[int, list[tuple[int, float]]] = {0: [], 1: []}
    samples = sampler.generate([[1, 2, 3], [4, 5]], SamplingParams(max_new_tokens=6),
                               budgets=[6, 3],
                               on_token=lambda row, tok, lp: seen[row].append((tok, lp)))
    for row, s in enumerate(samples):
        assert [t for t, _ in seen[row]] == s.ids and [lp for _, lp in seen[row]] == s.logprobs


def test_max_rows_decodes_in_bounded_batches_with_the_same_greedy_tokens(tiny_policy):
    contexts = [[1, 2, 3], [4, 5], [6], [7, 8, 9, 10], [11, 12]]
    budgets = [5, 3, 6, 4, 2]
    params = SamplingParams(temperature=0.0, max_new_tokens=6)
    whole = TransformersSampler(tiny_policy.model, tiny_policy.pad_id).generate(
        contexts, params, budgets)
    rows: list[int] = []
    hook = tiny_policy.model.register_forward_pre_hook(
        lambda _m, _a, kw: rows.append(kw["input_ids"].shape[0]), with_kwargs=True)
    seen: dict[int, list[int]] = {i: [] for i in range(len(contexts))}
    try:
        parts = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, max_rows=2).generate(
            contexts, params, budgets, on_token=lambda row, tok, _lp: seen[row].append(tok))
    finally:
        hook.remove()
    assert max(rows) == 2  # no decoding batch held more than max_rows rows
    assert [s.ids for s in parts] == [s.ids for s in whole]
    assert [len(s.ids) for s in parts] == budgets  # each row kept its own budget
    assert [seen[i] for i in range(len(contexts))] == [s.ids for s in parts]


def test_max_rows_must_not_be_negative(tiny_policy):
    with pytest.raises(ValueError, match="max_rows"):
        TransformersSampler(tiny_policy.model, tiny_policy.pad_id, max_rows=-1)

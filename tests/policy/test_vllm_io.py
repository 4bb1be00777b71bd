"""The vLLM sampler's pure parts: engine parameters from tracerl's, and engine outputs
back into Samples that mean what the transformers sampler's mean (real tokenizers' ids;
no vLLM or GPU needed)."""

import importlib.util

import pytest

from tracerl.policy.sampler import StopText
from tracerl.policy.sampling import SamplingParams
from tracerl.policy.vllm_io import engine_params, stop_at, to_sample

STOPS = ("</tool_call>", "<|im_end|>")
CALL = '<tool_call>{"name": "calculator", "arguments": {"expression": "2*3"}}</tool_call>'
HAS_VLLM = importlib.util.find_spec("vllm") is not None


def _positions(ids, start=-0.5):
    """Per-position log-probability maps as vLLM returns them (the sampled id's entry),
    each value distinct so misalignment shows."""
    return [{tok: start - i / 100} for i, tok in enumerate(ids)]


def test_engine_params_carry_stops_budget_and_the_logprob_request():
    p = SamplingParams(temperature=0.7, max_new_tokens=64, stop_ids=(5, 9), stop_strings=STOPS)
    kw = engine_params(p, budget=17)
    assert kw["max_tokens"] == 17 and kw["temperature"] == 0.7 and kw["top_p"] == 1.0
    assert kw["stop_token_ids"] == [5, 9] and kw["stop"] == list(STOPS)
    assert kw["logprobs"] == 0 and kw["ignore_eos"] is True
    assert kw["skip_special_tokens"] is False and kw["detokenize"] is True
    assert engine_params(SamplingParams(), 3)["detokenize"] is False  # nothing to match


def test_engine_params_refuse_top_p_and_empty_budgets():
    with pytest.raises(ValueError, match="top_p=0.9.*top_p=1"):
        engine_params(SamplingParams(top_p=0.9), 8)
    with pytest.raises(ValueError, match="budget"):
        engine_params(SamplingParams(), 0)


@pytest.mark.skipif(not HAS_VLLM, reason="vllm is not installed (the tracerl[vllm] extra)")
def test_engine_params_are_vllm_sampling_params():
    from vllm import SamplingParams as VParams

    sp = VParams(**engine_params(SamplingParams(stop_ids=(3,), stop_strings=STOPS), 11))
    assert sp.max_tokens == 11 and sp.logprobs == 0 and 3 in sp.stop_token_ids


@pytest.mark.parametrize("name", ["spelt", "tiny", pytest.param("smollm2", marks=pytest.mark.slow)])
def test_ids_past_a_stop_string_are_cut_however_it_is_tokenized(chat_tokenizer, name):
    tok = chat_tokenizer(name)
    ids = tok.encode(CALL + " and more text", add_special_tokens=False)
    n = len(tok.encode(CALL, add_special_tokens=False))
    params = SamplingParams(stop_strings=STOPS)
    s = to_sample(ids, _positions(ids), "stop", params, budget=200,
                  stop_text=StopText(tok, STOPS))
    assert s.finish == "stop" and s.ids == ids[:n]
    assert tok.decode(s.ids).endswith("</tool_call>")
    assert s.logprobs == [-0.5 - i / 100 for i in range(n)]


def test_a_stop_id_ends_the_sample_at_its_first_occurrence(chat_tokenizer):
    tok = chat_tokenizer("tiny")
    end = tok.convert_tokens_to_ids("<|im_end|>")
    ids = tok.encode("Answer: 6", add_special_tokens=False) + [end] + [end]
    s = to_sample(ids, _positions(ids), "stop", SamplingParams(stop_ids=(end,)), budget=40)
    assert s.finish == "stop" and s.ids == ids[:-1] and len(s.logprobs) == len(s.ids)


def test_a_row_that_ran_out_of_budget_is_length(chat_tokenizer):
    tok = chat_tokenizer("spelt")
    ids = tok.encode("no stop in here at all", add_special_tokens=False)[:8]
    s = to_sample(ids, _positions(ids), "length", SamplingParams(stop_strings=STOPS),
                  budget=8, stop_text=StopText(tok, STOPS))
    assert s.finish == "length" and s.ids == ids


def test_an_engine_stop_tracerl_cannot_see_still_ends_the_turn():
    s = to_sample([4, 5, 6], _positions([4, 5, 6]), "stop", SamplingParams(), budget=8)
    assert s.finish == "stop" and s.ids == [4, 5, 6]


def test_engine_failures_are_errors_not_samples():
    p = SamplingParams()
    with pytest.raises(RuntimeError, match="abort"):
        to_sample([1], _positions([1]), "abort", p, budget=4)
    with pytest.raises(RuntimeError, match="budget of 2"):
        to_sample([1, 2, 3], _positions([1, 2, 3]), "length", p, budget=2)
    with pytest.raises(RuntimeError, match="no tokens"):
        to_sample([], [], "length", p, budget=2)
    with pytest.raises(RuntimeError, match="log-probability"):
        to_sample([1, 2], None, "length", p, budget=2)
    with pytest.raises(ValueError, match="sampled token 2"):
        to_sample([1, 2], [{1: -0.1}, {7: -0.2}], "length", p, budget=2)


def test_stop_at_reports_no_stop_as_zero(chat_tokenizer):
    tok = chat_tokenizer("spelt")
    ids = tok.encode("</tool_call", add_special_tokens=False)  # one character short
    assert stop_at(ids, SamplingParams(stop_strings=STOPS), StopText(tok, STOPS)) == 0


@pytest.mark.skipif(not HAS_VLLM, reason="vllm is not installed (the tracerl[vllm] extra)")
def test_vllm_logprob_objects_are_read():
    from vllm.logprobs import Logprob

    s = to_sample([3, 4], [{3: Logprob(-0.25)}, {4: Logprob(-1.5)}], "length",
                  SamplingParams(), budget=2)
    assert s.logprobs == [-0.25, -1.5]

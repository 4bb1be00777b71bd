"""The vLLM sampler on a real GPU with SmolLM2-135M: it samples what the learner would
(greedy ids and log-probabilities of the same tokens), stops where the transformers
sampler stops, and after a weight sync (full, or the LoRA adapter alone, across a sleep)
samples from the new weights. Skipped without vLLM and a CUDA GPU;
benchmarks/gpu_vllm.sh runs these on a GPU machine."""

import importlib.util

import pytest
import torch

from tracerl.policy.lora import apply_lora
from tracerl.policy.model import load_policy
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampler_settings import SamplerSettings
from tracerl.policy.sampling import SamplingParams
from tracerl.policy.settings import LoraSettings
from tracerl.policy.weight_sync import EngineSync
from tracerl.rollout.render import ChatRenderer
from tracerl.train.batch import token_logprobs
from tracerl.types import Message

HAS_GPU_VLLM = torch.cuda.is_available() and importlib.util.find_spec("vllm") is not None
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not HAS_GPU_VLLM, reason="needs vLLM and a CUDA GPU (pip install 'tracerl[vllm]'); "
    "benchmarks/gpu_vllm.sh runs these on a GPU machine")]

# float32 in the engine too, so greedy decoding must agree token for token with the
# learner's model; bf16 (the default) is what benchmarks/gpu_vllm.py measures.
EXACT = SamplerSettings(backend="vllm", dtype="float32", gpu_memory_utilization=0.2,
                        enforce_eager=True, max_model_len=1024)


LORA = LoraSettings(r=8, alpha=16.0)


@pytest.fixture(scope="module")
def sampler(smollm2_dir):
    """One engine for the module (vLLM holds the GPU for its process), LoRA enabled; each
    test first syncs its own policy's weights into it."""
    from tracerl.policy.vllm_sampler import VLLMSampler

    return VLLMSampler.for_policy(load_policy(smollm2_dir, "cuda"), EXACT, seed=0, lora=LORA)


def _contexts(policy) -> list[list[int]]:
    renderer = ChatRenderer(policy.tokenizer)
    asks = ["What is 12 * 7?", "Name a colour.", "Say hello in French."]
    return [renderer.prompt_ids([Message("user", a)]) for a in asks]


def _params(policy, temperature=0.0) -> SamplingParams:
    stops = ChatRenderer(policy.tokenizer).stop_strings
    return SamplingParams(temperature, 1.0, 40, policy.stop_ids, stops)


@torch.no_grad()
def _learner_logprobs(model, context, ids, temperature=1.0) -> torch.Tensor:
    full = torch.tensor([context + ids], device="cuda")
    logp = token_logprobs(model.eval(), full, torch.ones_like(full), temperature)  # (1, T-1)
    return logp[0, len(context) - 1:]


def _reference(policy, contexts, params, budgets=None):
    return TransformersSampler(policy.model, policy.pad_id, tokenizer=policy.tokenizer
                               ).generate(contexts, params, budgets)


def test_greedy_samples_and_logprobs_match_the_learner(sampler, smollm2_dir):
    policy = load_policy(smollm2_dir, "cuda")
    EngineSync(sampler).push(policy.model, everything=True)
    contexts, params = _contexts(policy), _params(policy)
    budgets = [40, 5, 40]
    got = sampler.generate(contexts, params, budgets)
    want = _reference(policy, contexts, params, budgets)
    assert len(got[1].ids) <= 5
    for g, w, c in zip(got, want, contexts, strict=True):
        assert g.ids == w.ids and g.finish == w.finish
        learner = _learner_logprobs(policy.model, c, g.ids)
        assert torch.allclose(torch.tensor(g.logprobs, device="cuda"), learner, atol=2e-3)


def test_a_weight_sync_across_a_sleep_changes_what_the_engine_samples(sampler, smollm2_dir):
    policy = load_policy(smollm2_dir, "cuda")
    engine = EngineSync(sampler)
    engine.push(policy.model, everything=True)
    contexts, params = _contexts(policy), _params(policy)
    before = [s.ids for s in sampler.generate(contexts, params)]
    with torch.no_grad():
        torch.manual_seed(0)
        for p in policy.model.model.layers[-1].parameters():
            p.add_(torch.randn_like(p) * 0.05)
    engine.release()
    assert sampler.asleep == 1
    engine.push(policy.model, everything=True)
    after = [s.ids for s in sampler.generate(contexts, params)]
    assert after == [w.ids for w in _reference(policy, contexts, params)]
    assert after != before


def test_a_lora_sync_sends_the_adapter_and_the_engine_applies_it(sampler, smollm2_dir):
    policy = apply_lora(load_policy(smollm2_dir, "cuda"), LORA)
    engine = EngineSync(sampler)
    engine.push(policy.model, everything=True)  # the base (undoes the previous test)
    with torch.no_grad():
        torch.manual_seed(0)
        for name, p in policy.model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.02)
    engine.push(policy.model)  # the adapter alone
    contexts, params = _contexts(policy), _params(policy)
    got = [s.ids for s in sampler.generate(contexts, params)]
    assert got == [w.ids for w in _reference(policy, contexts, params)]

import pytest
import torch
from peft import LoraConfig, get_peft_model

from tracerl.policy.lora import apply_lora
from tracerl.policy.merged_lora import MergedLora, mergeable
from tracerl.policy.sampler import TransformersSampler
from tracerl.policy.sampling import SamplingParams
from tracerl.policy.settings import LoraSettings

IDS = torch.tensor([[5, 17, 33, 8, 61, 12, 40], [9, 9, 70, 3, 22, 1, 14]])
CONTEXTS = [[1, 2, 3, 4, 5], [6, 7], [8, 9, 10, 11, 12, 13, 14], [15]]


def logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=IDS).logits


def test_the_merged_copy_computes_the_adapted_model(lora_policy):
    merged = MergedLora(lora_policy.model)
    peft_logits = logits(lora_policy.model)
    with lora_policy.model.disable_adapter():
        base_logits = logits(lora_policy.model)
    assert not torch.allclose(peft_logits, base_logits, atol=1e-3)  # the adapter matters
    copy_logits = logits(merged.current())
    torch.testing.assert_close(copy_logits, peft_logits, atol=2e-5, rtol=1e-5)


def test_only_the_adapted_weights_are_new_memory(lora_policy):
    peft = lora_policy.model
    merged = MergedLora(peft)
    mine = {p.data_ptr() for p in peft.parameters()}
    copy = merged.current()
    new = [(n, p) for n, p in copy.named_parameters() if p.data_ptr() not in mine]
    assert sorted(n.split(".")[-2] for n, _ in new) == sorted(
        ["q_proj", "v_proj"] * lora_policy.model.config.num_hidden_layers)
    assert not any("lora_" in n for n, _ in copy.named_parameters())
    assert not any(p.requires_grad for p in copy.parameters())
    # the learner's parameters are untouched: the same tensors, the adapter trainable
    assert [n for n, p in peft.named_parameters() if p.requires_grad] and all(
        "lora_" in n for n, p in peft.named_parameters() if p.requires_grad)


@pytest.mark.parametrize("fused", [True, False])
def test_the_copy_follows_an_optimiser_step(lora_policy, fused):
    # fused AdamW (the trainer's, tracerl.train.optim) bumps no version counter
    peft = lora_policy.model
    merged = MergedLora(peft)
    before = logits(merged.current())
    params = [p for p in peft.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=0.05, fused=fused)
    loss = peft(input_ids=IDS).logits.logsumexp(-1).mean()
    loss.backward()
    opt.step()
    after_peft = logits(peft)
    assert not torch.allclose(after_peft, before, atol=1e-3)
    torch.testing.assert_close(logits(merged.current()), after_peft, atol=2e-5, rtol=1e-5)


def test_with_the_adapter_switched_off_it_is_the_base(lora_policy):
    merged = MergedLora(lora_policy.model)
    with lora_policy.model.disable_adapter():
        assert merged.current() is lora_policy.model
        base = logits(merged.current())
    assert not torch.allclose(logits(merged.current()), base, atol=1e-3)


def test_what_cannot_merge_is_named(fresh_tiny_policy):
    assert mergeable(fresh_tiny_policy.model) == "not a peft model"
    with pytest.raises(ValueError, match="not a peft model"):
        MergedLora(fresh_tiny_policy.model)
    dora = get_peft_model(fresh_tiny_policy.model, LoraConfig(
        r=2, target_modules=["q_proj"], use_dora=True, task_type="CAUSAL_LM"))
    assert "DoRA" in mergeable(dora)


def test_an_adapter_merged_in_place_is_not_merged_twice(lora_policy):
    lora_policy.model.merge_adapter()
    assert "merged into the base already" in mergeable(lora_policy.model)


def test_the_sampler_decodes_the_same_tokens_merged(lora_policy):
    params = SamplingParams(temperature=0.0, max_new_tokens=8)
    plain = TransformersSampler(lora_policy.model, lora_policy.pad_id).generate(CONTEXTS, params)
    sampler = TransformersSampler(lora_policy.model, lora_policy.pad_id, merge_lora=True)
    assert sampler.merged is not None
    calls: list[int] = []
    hook = lora_policy.model.register_forward_pre_hook(lambda *_: calls.append(1))
    try:
        fused = sampler.generate(CONTEXTS, params)
    finally:
        hook.remove()
    assert not calls  # the peft model never ran
    assert [s.ids for s in fused] == [s.ids for s in plain]
    for a, b in zip(fused, plain, strict=True):
        torch.testing.assert_close(torch.tensor(a.logprobs), torch.tensor(b.logprobs),
                                   atol=1e-4, rtol=0)


def test_a_weight_sync_reaches_the_merged_copy(lora_policy):
    params = SamplingParams(temperature=0.0, max_new_tokens=6)
    sampler = TransformersSampler(lora_policy.model, lora_policy.pad_id, merge_lora=True)
    first = sampler.generate(CONTEXTS, params)
    named = [(n, torch.randn_like(p) * 2.0) for n, p in lora_policy.model.named_parameters()
             if "lora_B" in n]
    sampler.load_weights(named)
    again = sampler.generate(CONTEXTS, params)
    reference = TransformersSampler(lora_policy.model, lora_policy.pad_id).generate(
        CONTEXTS, params)
    assert [s.ids for s in again] == [s.ids for s in reference]
    assert [s.ids for s in again] != [s.ids for s in first]


def test_a_model_without_an_adapter_samples_as_before(tiny_policy):
    sampler = TransformersSampler(tiny_policy.model, tiny_policy.pad_id, merge_lora=True)
    assert sampler.merged is None
    params = SamplingParams(temperature=0.0, max_new_tokens=5)
    plain = TransformersSampler(tiny_policy.model, tiny_policy.pad_id).generate(CONTEXTS, params)
    assert [s.ids for s in sampler.generate(CONTEXTS, params)] == [s.ids for s in plain]


def test_bfloat16_merges_in_float32_and_rounds_once(fresh_tiny_policy):
    fresh_tiny_policy.model.to(torch.bfloat16)
    policy = apply_lora(fresh_tiny_policy, LoraSettings(r=4))
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for name, p in policy.model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.05)
    merged = MergedLora(policy.model)
    copy = merged.current()
    layer = policy.model.get_base_model().model.layers[0].self_attn.q_proj
    target = copy.model.layers[0].self_attn.q_proj
    assert target.weight.dtype == torch.bfloat16
    exact = layer.base_layer.weight.float() + layer.get_delta_weight("default").float()
    assert torch.equal(target.weight, exact.to(torch.bfloat16))
    a, b = logits(copy).float(), logits(policy.model).float()
    assert (a - b).abs().max() < 0.1 * b.abs().max()


def test_a_dtype_change_of_the_learner_reaches_the_copy(lora_policy):
    merged = MergedLora(lora_policy.model)
    merged.current()
    lora_policy.model.to(torch.float64)
    copy = merged.current()
    assert all(p.dtype == torch.float64 for p in copy.parameters())
    torch.testing.assert_close(logits(copy), logits(lora_policy.model), atol=1e-9, rtol=1e-9)

"""Named learner tensors as an engine loads them: a LoRA sync's tensors written as a peft
adapter directory load back into the same function; base weights get the plain model's
names."""

import pytest
import torch
from transformers import AutoModelForCausalLM

from tracerl.policy.adapter_files import (
    split_weights,
    wrapped_modules,
    wrapped_names,
    write_adapter,
)
from tracerl.policy.lora import apply_lora, base_state_dict, load_adapter
from tracerl.policy.model import load_policy
from tracerl.policy.settings import LoraSettings
from tracerl.policy.weight_sync import learner_weights

SETTINGS = LoraSettings(r=4, alpha=8.0)


def _trained_adapter(policy):
    lora = apply_lora(policy, SETTINGS)
    torch.manual_seed(3)
    with torch.no_grad():  # B starts at 0: give the adapter something to say
        for name, p in lora.model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    return lora


@pytest.mark.slow
def test_a_lora_sync_carries_the_adapter_alone_and_it_loads_back(fresh_tiny_policy, tmp_path):
    base_dir = fresh_tiny_policy.model.name_or_path
    lora = _trained_adapter(fresh_tiny_policy)
    base, adapter = split_weights(learner_weights(lora.model))
    assert base == [] and adapter
    assert all(".lora_A.weight" in k or ".lora_B.weight" in k for k in adapter)
    path = write_adapter(tmp_path / "v1", adapter, SETTINGS, base_dir)

    plain = AutoModelForCausalLM.from_pretrained(base_dir).eval()
    reloaded = load_adapter(load_policy(base_dir), path, trainable=False).model.eval()
    ids = torch.tensor([[3, 7, 11, 5, 9]])
    with torch.no_grad():
        want = lora.model.eval()(input_ids=ids).logits
        got = reloaded(input_ids=ids).logits
        without = plain(input_ids=ids).logits
    torch.testing.assert_close(got, want)
    assert not torch.allclose(without, want, atol=1e-3)  # the adapter is what was synced


def test_every_weight_of_a_lora_model_gets_the_plain_models_names(fresh_tiny_policy):
    base_dir = fresh_tiny_policy.model.name_or_path
    lora = _trained_adapter(fresh_tiny_policy)
    base, adapter = split_weights(learner_weights(lora.model, everything=True))
    plain = AutoModelForCausalLM.from_pretrained(base_dir)
    assert [n for n, _ in base] == [n for n, _ in plain.named_parameters()]
    assert {n for n, _ in base} <= set(base_state_dict(lora.model))
    layers = plain.config.num_hidden_layers
    assert len(adapter) == 2 * len(SETTINGS.targets) * layers  # lora_A and lora_B


def test_a_full_fine_tune_syncs_every_parameter_under_its_own_name(fresh_tiny_policy):
    base, adapter = split_weights(learner_weights(fresh_tiny_policy.model))
    assert adapter == {}
    assert [n for n, _ in base] == [n for n, _ in fresh_tiny_policy.model.named_parameters()]


# vLLM 0.24's LlamaForCausalLM: its packing, and some parameter names with LoRA enabled.
LLAMA_PACKED = {"qkv_proj": ["q_proj", "k_proj", "v_proj"],
                "gate_up_proj": ["gate_proj", "up_proj"]}
ENGINE_NAMES = ["model.embed_tokens.weight",
                "model.layers.0.self_attn.qkv_proj.base_layer.weight",
                "model.layers.0.self_attn.o_proj.base_layer.weight",
                "model.layers.0.mlp.gate_up_proj.base_layer.weight",
                "model.layers.0.mlp.down_proj.base_layer.weight",
                "model.layers.0.input_layernorm.weight", "model.norm.weight"]


def test_base_weights_are_renamed_for_an_engines_lora_wrappers(fresh_tiny_policy):
    wrapped = wrapped_modules(ENGINE_NAMES)
    assert wrapped == {"qkv_proj", "o_proj", "gate_up_proj", "down_proj"}
    base, _ = split_weights(learner_weights(fresh_tiny_policy.model))
    renamed = dict(wrapped_names(base, wrapped, LLAMA_PACKED))
    layer = "model.layers.0"
    for proj in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                 "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"):
        assert f"{layer}.{proj}.base_layer.weight" in renamed
        assert f"{layer}.{proj}.weight" not in renamed
    for kept in ("model.embed_tokens.weight", f"{layer}.input_layernorm.weight",
                 "model.norm.weight"):
        assert kept in renamed
    assert len(renamed) == len(base)

import json

import pytest
import torch

from tracerl.policy.lora import (
    adapter_base,
    adapter_dir_base,
    apply_lora,
    fold_adapter,
    load_adapter_policy,
    merge_adapter,
    save_adapter,
    save_base,
    trainable_parameters,
)
from tracerl.policy.model import load_policy
from tracerl.policy.settings import LoraSettings

IDS = torch.tensor([[5, 17, 33, 8, 61, 12, 40], [9, 9, 70, 3, 22, 1, 14]])


def logits(model: torch.nn.Module) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=IDS).logits


def test_a_fresh_adapter_starts_as_the_base_and_only_it_trains(fresh_tiny_policy):
    before = logits(fresh_tiny_policy.model)
    policy = apply_lora(fresh_tiny_policy, LoraSettings(r=4))
    assert torch.equal(logits(policy.model), before)  # B = 0
    names = [n for n, p in policy.model.named_parameters() if p.requires_grad]
    assert names and all("lora_" in n for n in names)
    adapted = sum(p.numel() for p in trainable_parameters(policy.model))
    assert adapted < 0.2 * sum(p.numel() for p in policy.model.parameters())


def test_the_default_targets_cover_every_linear_layer_of_a_llama_block(fresh_tiny_policy):
    policy = apply_lora(fresh_tiny_policy, LoraSettings(r=2))
    adapted = {n.split(".")[-4] for n, _ in policy.model.named_parameters() if "lora_A" in n}
    assert adapted == set(LoraSettings().targets)


def test_an_unknown_target_is_named(fresh_tiny_policy):
    with pytest.raises(ValueError, match="lora.targets"):
        apply_lora(fresh_tiny_policy, LoraSettings(r=2, targets=["qkv_proj"]))


def test_the_disabled_adapter_is_the_base_exactly(lora_policy):
    base = load_policy(adapter_base(lora_policy.model))
    assert not torch.equal(logits(lora_policy.model), logits(base.model))
    with lora_policy.model.disable_adapter():
        assert torch.equal(logits(lora_policy.model), logits(base.model))


def test_an_adapter_directory_holds_the_adapter_only_and_loads_back(tmp_path, lora_policy):
    out = tmp_path / "ckpt"
    save_adapter(lora_policy.model, out, root=tmp_path)
    base_dir = tmp_path / "tiny"  # fresh_tiny_policy's directory, under root
    assert json.loads((out / "adapter_config.json").read_text())[
        "base_model_name_or_path"] == "../tiny"
    assert adapter_dir_base(out) == base_dir.resolve()
    assert not (out / "config.json").exists()
    size = (out / "adapter_model.safetensors").stat().st_size
    assert size < (base_dir / "model.safetensors").stat().st_size / 10

    loaded = load_adapter_policy(out)
    want = lora_policy.model.state_dict()
    got = loaded.model.state_dict()
    assert want.keys() == got.keys()
    assert all(torch.equal(want[k], got[k]) for k in want)


def test_folding_keeps_the_function_and_makes_it_the_new_base(lora_policy):
    model = lora_policy.model
    adapted = logits(model)
    fold_adapter(model)
    torch.testing.assert_close(logits(model), adapted, atol=1e-5, rtol=0)
    assert all(not p.any() for n, p in model.named_parameters() if "lora_B" in n)
    with model.disable_adapter():  # the reference of the next stage
        torch.testing.assert_close(logits(model), adapted, atol=1e-5, rtol=0)


def test_the_saved_base_is_a_plain_model_of_the_folded_weights(tmp_path, lora_policy):
    fold_adapter(lora_policy.model)
    save_base(lora_policy, tmp_path / "base")
    assert adapter_base(lora_policy.model) == (tmp_path / "base").resolve()
    plain = load_policy(tmp_path / "base")
    torch.testing.assert_close(logits(plain.model), logits(lora_policy.model), atol=1e-5,
                               rtol=0)


def test_merging_gives_a_plain_model_with_the_adapters_function(tmp_path, lora_policy):
    adapted = logits(lora_policy.model)
    merged = merge_adapter(lora_policy)
    merged.model.save_pretrained(str(tmp_path / "m"))
    merged.tokenizer.save_pretrained(str(tmp_path / "m"))
    torch.testing.assert_close(logits(load_policy(tmp_path / "m").model), adapted, atol=1e-5,
                               rtol=0)

"""Named learner tensors as an engine loads them: base weights under Hugging Face names,
a LoRA adapter as a peft adapter directory.

A weight sync carries the learner's `named_parameters()` names. With LoRA those are
peft's in-memory names (`base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight`,
`...q_proj.lora_A.default.weight`); an engine wants the base model's own names
(`model.layers.0.self_attn.q_proj.weight`) and adapters as files in peft's saved format
(`...q_proj.lora_A.weight`, without the adapter's name), the directory vLLM's
`LoRARequest` points at. `split_weights` sorts and renames; `write_adapter` writes the
directory (adapter_config.json by peft's own LoraConfig, so any peft reader accepts it).

An engine serving LoRA wraps its linear layers (vLLM 0.24, vllm/lora/layers: every
supported one, whatever the adapter targets), so a wrapped layer's weight is
`<module>.base_layer.weight` there; `wrapped_names` renames base weights to match before
the model's own `load_weights` maps `q_proj` into its packed `qkv_proj`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import torch
from peft import LoraConfig
from safetensors.torch import save_file

from tracerl.policy.settings import LoraSettings

PEFT_PREFIX = "base_model.model."
_ADAPTER_NAME = re.compile(r"\.(lora_[AB]|lora_embedding_[AB])\.[^.]+\.weight$")


def is_adapter_weight(name: str) -> bool:
    return _ADAPTER_NAME.search(name) is not None


def saved_adapter_name(name: str) -> str:
    """peft's in-memory adapter tensor name -> its name in adapter_model.safetensors."""
    return _ADAPTER_NAME.sub(r".\1.weight", name)


def base_name(name: str) -> str:
    """A base weight's name inside a peft model -> the plain model's name."""
    if name.startswith(PEFT_PREFIX):
        name = name[len(PEFT_PREFIX):]
    return name.replace(".base_layer.", ".")


def split_weights(weights: Iterable[tuple[str, torch.Tensor]]
                  ) -> tuple[list[tuple[str, torch.Tensor]], dict[str, torch.Tensor]]:
    """(base weights under the plain model's names, adapter tensors under saved names)."""
    base: list[tuple[str, torch.Tensor]] = []
    adapter: dict[str, torch.Tensor] = {}
    for name, tensor in weights:
        if is_adapter_weight(name):
            adapter[saved_adapter_name(name)] = tensor
        else:
            base.append((base_name(name), tensor))
    return base, adapter


def write_adapter(path: Path, tensors: dict[str, torch.Tensor], settings: LoraSettings,
                  base_model: str) -> Path:
    """A peft adapter directory at `path` holding `tensors` (saved names)."""
    if not tensors:
        raise ValueError("an adapter needs at least one lora_A / lora_B tensor")
    path.mkdir(parents=True, exist_ok=True)
    config = LoraConfig(r=settings.r, lora_alpha=settings.alpha, lora_dropout=0.0,
                        target_modules=list(settings.targets), task_type="CAUSAL_LM",
                        base_model_name_or_path=base_model)
    config.save_pretrained(str(path))
    save_file({k: v.detach().to("cpu").contiguous() for k, v in tensors.items()},
              str(path / "adapter_model.safetensors"))
    return path


def wrapped_modules(engine_names: Iterable[str]) -> set[str]:
    """The module names (last component) an engine wraps, from its parameter names."""
    return {n.split(".base_layer.")[0].rpartition(".")[2] for n in engine_names
            if ".base_layer." in n}


def wrapped_names(base: list[tuple[str, torch.Tensor]], wrapped: set[str],
                  packed: Mapping[str, Sequence[str]]) -> list[tuple[str, torch.Tensor]]:
    """Base weights named for an engine whose LoRA wrappers hold `wrapped` modules'
    weights under `base_layer`. `packed` is the engine model's packing (vLLM's
    `packed_modules_mapping`: qkv_proj <- q_proj, k_proj, v_proj), so `q_proj.weight`
    becomes `q_proj.base_layer.weight` when `qkv_proj` is wrapped."""
    owner = {part: whole for whole, parts in packed.items() for part in parts}
    out = []
    for name, tensor in base:
        module, _, leaf = name.rpartition(".")
        last = module.rpartition(".")[2]
        if owner.get(last, last) in wrapped and leaf in ("weight", "bias"):
            name = f"{module}.base_layer.{leaf}"
        out.append((name, tensor))
    return out

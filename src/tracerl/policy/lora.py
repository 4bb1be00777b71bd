"""LoRA (Hu et al. 2021) on the policy, through peft.

`apply_lora` injects low-rank adapters into the configured linear layers and freezes
everything else, so optimisers see only the adapter (`trainable_parameters`). The
frozen reference of a KL term or of DPO is the same model run under
`model.disable_adapter()`: one copy of the weights, not two.

On disk an adapter directory holds only the adapter (peft's adapter_config.json and
adapter_model.safetensors: 20 MB at r=16 on SmolLM2-135M, whose weights take 540 MB) and
names the base it belongs to in `base_model_name_or_path`; `save_adapter` writes that path
relative to the adapter directory when the base lives under `root` (the run directory),
so a run directory can be moved. `merge_adapter` folds the adapter into a plain model
that `load_policy` reads.

Stages: the reference of a stage is the policy at its start, so at a stage boundary the
trained adapter is folded into the base weights in place (`fold_adapter`) and starts
again from zero; the new base is saved once (`save_base`) for later adapter checkpoints.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from peft.tuners.lora import LoraLayer

from tracerl.policy.model import Policy, load_policy
from tracerl.policy.settings import LoraSettings

ADAPTER_CONFIG = "adapter_config.json"


def has_adapter(model: torch.nn.Module) -> bool:
    """Whether `model` carries a LoRA adapter (is a peft model)."""
    return isinstance(model, PeftModel)


def trainable_parameters(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """What an optimiser should get: every parameter that requires grad."""
    return [p for p in model.parameters() if p.requires_grad]


def _set_base(model: PeftModel, base: str | Path) -> None:
    for config in model.peft_config.values():
        config.base_model_name_or_path = str(base)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    # peft 0.21 still reads the `is_gradient_checkpointing` transformers 5 deprecates.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing",
                                category=FutureWarning)
        yield


def apply_lora(policy: Policy, settings: LoraSettings) -> Policy:
    """The policy with a fresh adapter (B = 0: it starts as the base); base frozen."""
    config = LoraConfig(r=settings.r, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
                        target_modules=list(settings.targets), task_type="CAUSAL_LM")
    name = policy.model.name_or_path  # "" for a model built in memory
    try:
        with _quiet():
            model = get_peft_model(policy.model, config)
    except ValueError as e:
        raise ValueError(f"lora.targets {list(settings.targets)}: {e}") from e
    if name and Path(name).is_dir():
        _set_base(model, Path(name).resolve())
    return replace(policy, model=model)


def adapter_base(model: PeftModel) -> Path:
    """The directory of the base weights the adapter is trained on."""
    return Path(model.peft_config["default"].base_model_name_or_path or "")


def is_adapter_dir(path: str | Path) -> bool:
    path = Path(path)
    return (path / ADAPTER_CONFIG).is_file() and not (path / "config.json").is_file()


def adapter_dir_base(path: str | Path) -> Path:
    """The base directory an adapter directory names (relative paths: to the adapter)."""
    path = Path(path)
    base = json.loads((path / ADAPTER_CONFIG).read_text()).get("base_model_name_or_path")
    if not base:
        raise ValueError(f"{path / ADAPTER_CONFIG} names no base_model_name_or_path")
    return (path / base).resolve() if not Path(base).is_absolute() else Path(base)


def save_adapter(model: PeftModel, path: Path, root: Path | None = None) -> None:
    """Write the adapter only; the base path is relative to `path` when under `root`."""
    model.save_pretrained(str(path))
    base = adapter_base(model).resolve()
    if root is not None and base.is_relative_to(root.resolve()):
        config_path = path / ADAPTER_CONFIG
        config = json.loads(config_path.read_text())
        config["base_model_name_or_path"] = os.path.relpath(base, path.resolve())
        config_path.write_text(json.dumps(config, indent=2))


def load_adapter(base: Policy, path: str | Path, trainable: bool = True) -> Policy:
    """`base` with the adapter saved in `path`."""
    with _quiet():
        model = PeftModel.from_pretrained(base.model, str(path), is_trainable=trainable)
    _set_base(model, adapter_dir_base(path))
    return replace(base, model=model)


def load_adapter_policy(path: str | Path, device: str = "cpu",
                        dtype: torch.dtype = torch.float32, name: str | None = None,
                        trainable: bool = True) -> Policy:
    """An adapter directory's base (as it names it) with the adapter on it."""
    base = load_policy(adapter_dir_base(path), device, dtype, name=name)
    return load_adapter(base, path, trainable)


@torch.no_grad()
def fold_adapter(model: PeftModel) -> None:
    """Merge the adapter into the base weights in place and restart it from B = 0.

    The model computes the same function before and after; afterwards the disabled
    adapter gives this policy (the reference of the next stage), not the original base.
    """
    for module in model.modules():
        if isinstance(module, LoraLayer):
            module.merge()  # base += scale * B @ A
            module.merged_adapters.clear()  # the update now belongs to the base weight
            for name in module.active_adapters:
                module.reset_lora_parameters(name, init_lora_weights=True)


def base_state_dict(model: PeftModel) -> dict[str, torch.Tensor]:
    """The base model's weights (as now, without the adapter), under their usual names."""
    out = {}
    for key, value in model.get_base_model().state_dict().items():
        if "lora_" in key:
            continue
        out[key.replace(".base_layer.", ".")] = value
    return out


def save_base(policy: Policy, path: Path) -> None:
    """Write the base weights (and tokenizer) as a plain model directory, atomically, and
    make it the base the adapter names."""
    model = policy.model
    assert isinstance(model, PeftModel)
    tmp = path.with_name(f".tmp-{path.name}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.get_base_model().save_pretrained(str(tmp), state_dict=base_state_dict(model))
    policy.tokenizer.save_pretrained(str(tmp))
    shutil.rmtree(path, ignore_errors=True)
    os.replace(tmp, path)
    _set_base(model, path.resolve())


def merge_adapter(policy: Policy) -> Policy:
    """A plain model with the adapter folded in (the adapter policy is consumed)."""
    model = policy.model
    assert isinstance(model, PeftModel)
    return replace(policy, model=model.merge_and_unload())

"""A sampling copy of a LoRA policy with the adapter merged into its linear layers.

Decoding runs one position per row per step, so a step's cost is mostly per-call
overhead rather than arithmetic, and peft's LoRA layer makes each adapted linear three
calls plus casts (the base layer, A, B, scaling, dtype conversions): on SmolLM2-135M with
a bfloat16 base, peft's layers took 10 of 13 s of a rollout's decoding. `MergedLora`
holds a plain copy of the model for the sampler in which each adapted layer is one
`nn.Linear` with the weight `W + scaling * B @ A` (computed in float32 or wider, stored
in the base's dtype); every other tensor (embeddings, norms, output layer, unadapted layers) is
the peft model's own, shared, not copied. Extra memory: the adapted layers' base weights
once more (212 MB for SmolLM2-135M's seven projections in bfloat16).

The copy follows the learner: `current()` compares the peft model's weights fingerprint
(tracerl.policy.prefix_store: each parameter's identity and in-place version, and the sum
of each trainable one, since fused AdamW bumps no version) with the one it last merged
from, and merges again when it changed (0.1 s on SmolLM2-135M), so no training loop has
to tell it. With the adapter switched off (`disable_adapter()`, the reference
policy) it returns the peft model itself.

Only plain LoRA on `nn.Linear` merges (peft's `lora.Linear` without DoRA or a LoRA
bias, one active adapter); `mergeable` says why a model does not, and the sampler then
decodes through peft as before.

In float32 the merged layer computes the same function up to float32 rounding. In
bfloat16 it rounds `W + delta` to bfloat16 where peft rounds `W @ x` and adds a float32
`delta @ x`: the sampler's log-probabilities move by rounding against the trainer's
(docs/benchmarks.md, "Merged LoRA sampling"), which the presets' truncated IS
(`rl.tis_cap`) weights like the rest of the bf16 drift.
"""

from __future__ import annotations

import copy

import torch
from peft import PeftModel
from peft.tuners.lora import Linear as LoraLinear
from peft.tuners.lora import LoraLayer

from tracerl.policy.prefix_store import weights_fingerprint


def mergeable(model: torch.nn.Module) -> str:
    """"" when `model` is a peft LoRA model `MergedLora` can merge; else why not."""
    if not isinstance(model, PeftModel):
        return "not a peft model"
    if len(model.active_adapters) != 1:
        return f"{len(model.active_adapters)} active adapters"
    name = model.active_adapters[0]
    for path, layer in model.named_modules():
        if not isinstance(layer, LoraLayer):
            continue
        if not isinstance(layer, LoraLinear) or not isinstance(layer.base_layer,
                                                                torch.nn.Linear):
            return f"{path} is a {type(layer).__name__}, not a LoRA linear layer"
        if name in layer.lora_A and (layer.use_dora.get(name) or layer.lora_bias.get(name)
                                     or name in layer.lora_variant):
            return f"{path} uses a LoRA variant (DoRA or a LoRA bias)"
        if layer.merged:
            return f"{path} has its adapter merged into the base already"
    return ""


class MergedLora:
    """The sampler's merged copy of a peft LoRA `model` (see the module docstring)."""

    def __init__(self, model: PeftModel) -> None:
        why = mergeable(model)
        if why:
            raise ValueError(f"cannot merge the adapter for sampling: {why}")
        self.peft = model
        self.adapter = model.active_adapters[0]
        base = model.get_base_model()
        self.layers = [(path, layer) for path, layer in base.named_modules()
                       if isinstance(layer, LoraLinear) and self.adapter in layer.lora_A]
        adapted = {id(layer.base_layer.weight) for _, layer in self.layers}
        # deepcopy with every tensor but the adapted layers' weights mapped to itself:
        # those are the only new storage
        memo: dict[int, object] = {id(t): t for t in (*base.parameters(), *base.buffers())
                                   if id(t) not in adapted}
        self.model = copy.deepcopy(base, memo)
        for path, _ in self.layers:
            wrapped = self.model.get_submodule(path)
            self.model.set_submodule(path, wrapped.base_layer)
        self.model.requires_grad_(False)
        self.model.eval()
        self._fingerprint: tuple | None = None

    def merged_layers(self) -> list[tuple[torch.nn.Linear, torch.nn.Linear, LoraLinear]]:
        """(merged copy's layer, peft's base layer, peft's LoRA layer) per adapted path."""
        return [(self.model.get_submodule(path), layer.base_layer, layer)
                for path, layer in self.layers]

    def fingerprint(self) -> tuple:
        """What the merged weights depend on: the peft model's weights fingerprint, and
        where and in which dtype each adapted base weight lives (`model.to(...)` swaps a
        parameter's data without an in-place version bump)."""
        layout = tuple((w.data_ptr(), w.dtype, w.device)
                       for w in (layer.base_layer.weight for _, layer in self.layers))
        return weights_fingerprint(self.peft), layout

    @torch.no_grad()
    def refresh(self, fingerprint: tuple | None = None) -> None:
        """Merge the adapter's current weights into the copy; `fingerprint` is the
        learner's as the caller just computed it (computed here when not given)."""
        for target, base, lora in self.merged_layers():
            weight = base.weight
            wide = torch.promote_types(weight.dtype, torch.float32)
            delta = lora.get_delta_weight(self.adapter).to(device=weight.device, dtype=wide)
            merged = weight.to(wide) + delta
            if target.weight.dtype != weight.dtype or target.weight.device != weight.device:
                target.weight = torch.nn.Parameter(merged.to(weight.dtype),
                                                   requires_grad=False)
            else:
                target.weight.copy_(merged)
        self._fingerprint = fingerprint if fingerprint is not None else self.fingerprint()

    def current(self) -> torch.nn.Module:
        """The model the sampler should run now: the merged copy, merged again if the
        learner's weights changed since the last merge; the peft model itself while its
        adapter is switched off."""
        fingerprint = self.fingerprint()
        if any(fingerprint[0][-1]):  # an adapter switched off: sample the base as peft does
            return self.peft
        if fingerprint != self._fingerprint:
            self.refresh(fingerprint)
        return self.model

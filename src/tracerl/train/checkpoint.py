"""Atomic checkpoints: weights, tokenizer, optimizer and every RNG state.

With LoRA a checkpoint holds the adapter only, naming its base directory
(tracerl.policy.lora); `load_checkpoint_policy` reads either kind.

A checkpoint is written into a temporary directory and renamed into place, then the
`latest` pointer is replaced atomically; a run killed at any moment leaves either the
previous checkpoint or the new one, never a half-written one.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tracerl.policy.lora import has_adapter, is_adapter_dir, load_adapter_policy, save_adapter
from tracerl.policy.model import Policy, load_policy


@dataclass
class TrainerState:
    """Where a run is, enough to continue it exactly."""

    stage_index: int = 0
    """Index into config.stages of the stage in progress (len(stages) when done)."""
    rl_step: int = 0
    """RL steps completed."""
    success_before: float | None = None
    wall_seconds: float = 0.0
    """Wall time spent in earlier invocations of the run (resume adds to it)."""
    evals: list[dict[str, Any]] = field(default_factory=list)
    """Held-out evaluations so far: {"step", "success", ...} records."""


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def rng_state(sampler_gen: torch.Generator | None) -> dict[str, Any]:
    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "sampler": sampler_gen.get_state() if sampler_gen is not None else None,
    }


def set_rng_state(state: dict[str, Any], sampler_gen: torch.Generator | None) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if sampler_gen is not None and state.get("sampler") is not None:
        sampler_gen.set_state(state["sampler"])


def save_checkpoint(run_dir: Path, policy: Policy, state: TrainerState,
                    optimizer: torch.optim.Optimizer | None,
                    rng: dict[str, Any], extras: Callable[[Path], None] | None = None) -> Path:
    """Write a checkpoint atomically; `extras(directory)` adds files (the critic, the
    async run's buffer) before it is renamed into place."""
    root = run_dir / "checkpoints"
    root.mkdir(parents=True, exist_ok=True)
    name = f"stage{state.stage_index}-step{state.rl_step:06d}"
    tmp = root / f".tmp-{name}"
    shutil.rmtree(tmp, ignore_errors=True)
    if has_adapter(policy.model):
        save_adapter(policy.model, tmp, root=run_dir)  # type: ignore[arg-type]
    else:
        policy.model.save_pretrained(str(tmp))
    policy.tokenizer.save_pretrained(str(tmp))
    torch.save({"state": asdict(state), "optimizer": optimizer.state_dict() if optimizer else None,
                "rng": rng}, tmp / "trainer_state.pt")
    if extras is not None:
        extras(tmp)
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    _write_atomic(root / "latest", name)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    pointer = run_dir / "checkpoints" / "latest"
    if not pointer.is_file():
        return None
    path = run_dir / "checkpoints" / pointer.read_text().strip()
    return path if (path / "trainer_state.pt").is_file() else None


def load_trainer_state(path: Path) -> tuple[TrainerState, dict[str, Any] | None, dict[str, Any]]:
    data = torch.load(path / "trainer_state.pt", weights_only=False)
    return TrainerState(**data["state"]), data["optimizer"], data["rng"]


def load_checkpoint_policy(path: Path, device: str = "cpu", dtype: torch.dtype = torch.float32,
                           name: str | None = None) -> Policy:
    """A checkpoint's policy: a full model, or the adapter on the base it names."""
    if is_adapter_dir(path):
        return load_adapter_policy(path, device, dtype, name)
    return load_policy(path, device, dtype, name)


def _order(path: Path) -> tuple[int, int]:
    stage, _, step = path.name.partition("-step")
    try:
        return int(stage.removeprefix("stage")), int(step)
    except ValueError:
        return (-1, -1)


def checkpoints(run_dir: Path) -> list[Path]:
    """Complete checkpoints, oldest first."""
    root = run_dir / "checkpoints"
    if not root.is_dir():
        return []
    done = [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
            and (p / "trainer_state.pt").is_file()]
    return sorted(done, key=_order)


def mark_best(run_dir: Path, path: Path) -> None:
    """Point `checkpoints/best` at `path` (the best held-out success so far)."""
    _write_atomic(run_dir / "checkpoints" / "best", path.name)


def best_checkpoint(run_dir: Path) -> Path | None:
    pointer = run_dir / "checkpoints" / "best"
    if not pointer.is_file():
        return None
    path = run_dir / "checkpoints" / pointer.read_text().strip()
    return path if path.is_dir() else None


def prune_checkpoints(run_dir: Path, keep: int, protected: set[str]) -> list[Path]:
    """Delete all but the newest `keep` checkpoints, never the latest, the best or a
    `protected` name (e.g. the RL stage's start, the KL reference on resume);
    `keep=0` keeps everything. Returns what was deleted."""
    if keep <= 0:
        return []
    spared = set(protected)
    for pointer in (latest_checkpoint(run_dir), best_checkpoint(run_dir)):
        if pointer is not None:
            spared.add(pointer.name)
    candidates = [p for p in checkpoints(run_dir) if p.name not in spared]
    doomed = candidates[:-keep] if len(candidates) > keep else []
    for path in doomed:
        shutil.rmtree(path, ignore_errors=True)
    return doomed

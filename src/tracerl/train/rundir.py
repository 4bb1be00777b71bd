"""A run's directory: a fresh one per run (never two runs' metrics in one place), the
config it used, and the checks that turn a bad setting into a message before training."""

from __future__ import annotations

import shutil
from pathlib import Path

import torch
import yaml

from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError, to_dict


def fresh_run_dir(out_dir: str | Path, name: str, overwrite: bool = False
                  ) -> tuple[Path, str, str]:
    """(directory, name, what was deleted) for a new run. A directory that exists and
    is not empty is never reused: with `overwrite` it is emptied (the third item says
    what it held; "" when nothing was deleted), else the name gets the first free
    suffix (`calc-tiny-2`, `calc-tiny-3`, ...)."""
    root = Path(out_dir)
    path = root / name
    if not path.exists() or not any(path.iterdir()):
        return path, name, ""
    if overwrite:
        held = _contents(path)
        shutil.rmtree(path)
        return path, name, held
    n = 2
    while (root / f"{name}-{n}").exists():
        n += 1
    return root / f"{name}-{n}", f"{name}-{n}", ""


def _contents(path: Path) -> str:
    """What a directory holds, in a line: its files, size and top-level entries."""
    files = [p for p in path.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files) / 1e6
    top = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
    shown = ", ".join(top[:6]) + (", ..." if len(top) > 6 else "")
    return f"{len(files)} files, {size:.1f} MB: {shown}"


def write_config(run_dir: Path, config: TrainConfig) -> None:
    """config.yaml: every knob resolved, what `tracerl eval RUN` and `--resume` rebuild from."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(config), sort_keys=False))


def check_device(device: str) -> None:
    """A device this torch build can use, or a ConfigError that says what to do."""
    kind = device.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device={device}: this torch build ({torch.__version__}) sees no "
                          "CUDA GPU; use device=cpu, or install a CUDA build of torch")
    if kind == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"device={device}: MPS is not available here; use device=cpu")
    if kind not in ("cpu", "cuda", "mps"):
        raise ConfigError(f"device={device!r}: expected cpu, cuda, cuda:N or mps")

"""`tracerl train [CONFIG.yaml] [key=value ...]`: build a TrainConfig, run the Trainer.

Arguments: `tracerl.cli.args`; the config keys in `train --help` come from TrainConfig.
Exit code 0 when the run finishes, 2 on a config error, 130 when interrupted (Ctrl-C:
a checkpoint is saved first and the message says how to resume).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tracerl.train import configlib
from tracerl.train.config import TrainConfig
from tracerl.train.configlib import ConfigError
from tracerl.train.trainer import Trainer, TrainingInterrupted


def _split_config_args(items: list[str]) -> tuple[str | None, list[str]]:
    yaml_path = None
    overrides = []
    for item in items:
        if "=" in item:
            overrides.append(item)
        elif yaml_path is None:
            yaml_path = item
        else:
            raise ConfigError(f"unexpected argument {item!r}: give one CONFIG.yaml and key=value")
    return yaml_path, overrides


def config_from_args(cls: type, args: argparse.Namespace, command: str = "train"
                     ) -> tuple[Any, Path | None]:
    """A `cls` config and its directory when resuming (else None: the caller picks a
    fresh one): from the arguments, or the run's own config.yaml plus key=value
    overrides with --resume. `tracerl optimize` shares it."""
    if args.resume:
        run_dir = Path(args.resume)
        saved = run_dir / "config.yaml"
        if not saved.is_file():
            raise ConfigError(f"--resume {run_dir}: no config.yaml there (not a run directory)")
        yaml_path, overrides = _split_config_args(args.config)
        if yaml_path:
            raise ConfigError("--resume takes the run's own config.yaml; pass only key=value")
        return configlib.load(cls, str(saved), overrides), run_dir
    yaml_path, overrides = _split_config_args(args.config)
    return configlib.load(cls, yaml_path, overrides), None


def _config(args: argparse.Namespace) -> tuple[TrainConfig, Path | None]:
    return config_from_args(TrainConfig, args)  # type: ignore[no-any-return]


def run(args: argparse.Namespace) -> int:
    """Train, print the summary as JSON; 2 on a config error, 130 when interrupted."""
    try:
        config, run_dir = _config(args)
        trainer = Trainer(config, run_dir, resume=bool(args.resume),
                          overwrite=bool(getattr(args, "overwrite", False)))
        summary = trainer.run()
    except ConfigError as e:
        print(f"tracerl train: config error: {e}", file=sys.stderr)
        return 2
    except TrainingInterrupted as e:
        print(f"tracerl train: {e}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # before training started: nothing to save
        print("tracerl train: interrupted before training started", file=sys.stderr)
        return 130
    run_dir = trainer.run_dir
    print(json.dumps({"run_dir": str(run_dir), "success_before": summary.success_before,
                      "success_after": summary.success_after, "steps": summary.steps,
                      "wall_seconds": summary.wall_seconds}, indent=2))
    return 0

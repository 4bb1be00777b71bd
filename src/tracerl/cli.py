"""The `tracerl` command: train, and the other subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tracerl.train.configlib import ConfigError, describe

TRAIN_EPILOG_HEAD = "config keys (set with key=value or in CONFIG.yaml):"


def _train_epilog() -> str:
    from tracerl.train.config import TrainConfig

    lines = [TRAIN_EPILOG_HEAD]
    for key, tp, default, doc in describe(TrainConfig):
        lines.append(f"  {key} ({tp}, default {default})")
        if doc:
            lines.append(f"      {doc}")
    return "\n".join(lines)


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


def cmd_train(args: argparse.Namespace) -> int:
    from tracerl.train import configlib
    from tracerl.train.config import TrainConfig
    from tracerl.train.trainer import Trainer

    if args.resume:
        run_dir = Path(args.resume)
        saved = run_dir / "config.yaml"
        if not saved.is_file():
            raise ConfigError(f"--resume {run_dir}: no config.yaml there (not a run directory)")
        yaml_path, overrides = _split_config_args(args.config)
        if yaml_path:
            raise ConfigError("--resume takes the run's own config.yaml; pass only key=value")
        config = configlib.load(TrainConfig, str(saved), overrides)
    else:
        yaml_path, overrides = _split_config_args(args.config)
        config = configlib.load(TrainConfig, yaml_path, overrides)
        run_dir = Path(config.out_dir) / config.name
    summary = Trainer(config, run_dir, resume=bool(args.resume)).run()
    print(json.dumps({"run_dir": str(run_dir), "success_before": summary.success_before,
                      "success_after": summary.success_after, "steps": summary.steps,
                      "wall_seconds": summary.wall_seconds}, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracerl", description="Train tool-using LLM agents with reinforcement learning.")
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser(
        "train", help="train on a task family (SFT then GRPO by default)",
        description="Train a policy. With no arguments: the built-in tiny policy on `calc`.",
        epilog=_train_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    train.add_argument("config", nargs="*", metavar="CONFIG.yaml | key=value",
                       help="an optional YAML file, then overrides like rl.steps=20")
    train.add_argument("--resume", metavar="RUN_DIR",
                       help="continue a run from its last checkpoint")
    train.set_defaults(func=cmd_train)
    _add_module_commands(sub)
    return parser


# Subcommands implemented beside their package: (name, module, help). Each module has
# add_arguments(parser) and run(args) -> exit code; imported only when used.
MODULE_COMMANDS = (
    ("eval", "tracerl.evals.cli_eval", "score a JSONL file or a trace store with metrics"),
    ("audit", "tracerl.rewards.cli_audit", "run known reward hacks against a reward"),
    ("doctor", "tracerl.sandbox.cli_doctor", "report which sandbox isolation layers work here"),
    ("traces", "tracerl.trace.cli_traces", "list, show and export recorded traces"),
)


def _add_module_commands(sub: argparse._SubParsersAction) -> None:
    import importlib

    for name, module_name, help_text in MODULE_COMMANDS:
        module = importlib.import_module(module_name)
        p = sub.add_parser(name, help=help_text, description=module.__doc__,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(func=module.run)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as e:
        print(f"tracerl {args.command}: config error: {e}", file=sys.stderr)
        return 2
    except FileNotFoundError as e:
        print(f"tracerl {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

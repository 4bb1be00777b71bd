"""The `tracerl` command: train, export, eval, audit, doctor, traces.

Start-up stays light: building the parser imports argparse and `tracerl.cli.args`
(every subcommand's arguments) and nothing else. The module that implements a
subcommand is imported when that subcommand runs (`_dispatch`), and the training config
only when `train --help` prints its keys; these are the CLI's only deferred imports.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from tracerl.cli import args as cli_args

TRAIN_EPILOG_HEAD = "config keys (set with key=value or in CONFIG.yaml):"


def _train_epilog() -> str:
    from tracerl.train.config import TrainConfig

    return _config_epilog(TrainConfig)


def _optimize_epilog() -> str:
    from tracerl.optimize.config import OptimizeConfig

    return _config_epilog(OptimizeConfig)


def _config_epilog(cls: type) -> str:
    from tracerl.train.configlib import describe

    lines = [TRAIN_EPILOG_HEAD]
    for key, tp, default, doc in describe(cls):
        lines.append(f"  {key} ({tp}, default {default})")
        if doc:
            lines.append(f"      {doc}")
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose epilog can be a function, called only when help is printed
    (so that `tracerl --help` does not import what `train --help` lists)."""

    def __init__(self, *args: Any, lazy_epilog: Callable[[], str] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_epilog = lazy_epilog

    def format_help(self) -> str:
        if self.lazy_epilog is not None:
            self.epilog = self.lazy_epilog()
        return super().format_help()


# (name, implementing module, help, description, add_arguments, epilog function). Each
# module has run(args) -> exit code.
COMMANDS = (
    ("train", "tracerl.cli.train", "train on a task family (SFT then GRPO by default)",
     cli_args.TRAIN_DESCRIPTION, cli_args.add_train_arguments, _train_epilog),
    ("export", "tracerl.cli.export", "merge a run's LoRA adapter into a full model",
     cli_args.EXPORT_DESCRIPTION, cli_args.add_export_arguments, None),
    ("eval", "tracerl.cli.eval", "score a JSONL file or a trace store with metrics",
     cli_args.EVAL_DESCRIPTION, cli_args.add_eval_arguments, None),
    ("metrics", "tracerl.cli.metrics", "list the metric catalogue (inputs and range)",
     cli_args.METRICS_DESCRIPTION, cli_args.add_metrics_arguments, None),
    ("audit", "tracerl.cli.audit", "run known reward hacks against a reward",
     cli_args.AUDIT_DESCRIPTION, cli_args.add_audit_arguments, None),
    ("doctor", "tracerl.cli.doctor", "report which sandbox isolation layers work here",
     cli_args.DOCTOR_DESCRIPTION, cli_args.add_doctor_arguments, None),
    ("scan", "tracerl.cli.scan", "run the guard's scanners over files or stdin",
     cli_args.SCAN_DESCRIPTION, cli_args.add_scan_arguments, None),
    ("traces", "tracerl.cli.traces", "list, show and export recorded traces",
     cli_args.TRACES_DESCRIPTION, cli_args.add_traces_arguments, None),
    ("view", "tracerl.cli.view", "a local web dashboard over run directories",
     cli_args.VIEW_DESCRIPTION, cli_args.add_view_arguments, None),
    ("serve", "tracerl.cli.serve", "serve a policy as a recording OpenAI endpoint",
     cli_args.SERVE_DESCRIPTION, cli_args.add_serve_arguments, None),
    ("optimize", "tracerl.cli.optimize", "optimize the agent's prompt within a budget",
     cli_args.OPTIMIZE_DESCRIPTION, cli_args.add_optimize_arguments, _optimize_epilog),
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tracerl", description="Train tool-using LLM agents with reinforcement learning.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module, help_text, description, add_arguments, epilog in COMMANDS:
        p = sub.add_parser(name, help=help_text, description=description, lazy_epilog=epilog,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        add_arguments(p)
        p.set_defaults(module=module)
    return parser


def _dispatch(args: argparse.Namespace) -> int:
    """Import the subcommand's implementation, now that it is the one to run.

    OpenMP threads that wait by spinning slow a shared machine many times over
    (docs/benchmarks.md, "Threads"); it reads OMP_WAIT_POLICY once, when torch first
    loads, which is inside the import below. A value the user set is kept."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return int(importlib.import_module(args.module).run(args))


def _find_local_modules() -> None:
    """`task.family=units_task:UnitsFamily` finds units_task.py in the current directory,
    as `python -m` would (a console script puts only its own directory on sys.path). It
    goes last, so a file there never shadows an installed module."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _find_local_modules()
    try:
        return _dispatch(args)
    except FileNotFoundError as e:
        print(f"tracerl {args.command}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

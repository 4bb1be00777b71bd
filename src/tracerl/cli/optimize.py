"""`tracerl optimize [CONFIG.yaml] [key=value ...]`: build an OptimizeConfig, run the search.

Arguments: `tracerl.cli.args`; the config keys in `optimize --help` come from
OptimizeConfig. The run directory is chosen like `train`'s (a fresh `out_dir/name`,
suffixed when it exists, unless --overwrite). Exit code 0 when the search finishes
(the budget running out is a normal end), 2 on a config or data error, 130 when
interrupted (history and spend are saved; the message says how to resume).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tracerl.cli.eval import parse_metric
from tracerl.cli.train import config_from_args
from tracerl.evals.metric import as_reward
from tracerl.optimize.config import OptimizeConfig
from tracerl.optimize.data import DataError
from tracerl.optimize.objective import PerTurnMean
from tracerl.optimize.prompt import PromptError
from tracerl.optimize.run import Optimization, OptimizationInterrupted
from tracerl.rewards.audit import resolve_reward
from tracerl.train.configlib import ConfigError
from tracerl.train.rundir import fresh_run_dir

_NO_JUDGE = argparse.Namespace(judge_url="", judge_model="")


def resolve_objective(spec: str) -> Any:
    """'' -> None (the family's reward); metric:SPEC and per_turn:SPEC -> an evaluate()
    metric as a Reward; anything else a reward name or module:attribute."""
    if not spec:
        return None
    kind, _, rest = spec.partition(":")
    try:
        if kind == "metric":
            return as_reward(parse_metric(rest, _NO_JUDGE))
        if kind == "per_turn":
            return PerTurnMean(parse_metric(rest, _NO_JUDGE))
        return resolve_reward(spec)
    except ValueError as e:
        raise ConfigError(f"objective={spec!r}: {e}") from e


def _config(args: argparse.Namespace) -> tuple[OptimizeConfig, Path]:
    config, run_dir = config_from_args(OptimizeConfig, args)
    if run_dir is not None:
        return config, run_dir
    run_dir, name, deleted = fresh_run_dir(config.out_dir, config.name,
                                           bool(getattr(args, "overwrite", False)))
    if deleted:
        print(f"tracerl optimize: --overwrite deleted the earlier run in {run_dir} "
              f"({deleted})", file=sys.stderr)
    return replace(config, name=name), run_dir


def run(args: argparse.Namespace) -> int:
    """Search, print the summary as JSON; 2 on a config error, 130 when interrupted."""
    try:
        config, run_dir = _config(args)
        search = Optimization(config, run_dir=run_dir,
                              objective=resolve_objective(config.objective),
                              resume=bool(args.resume))
        result = search.run()
    except (ConfigError, DataError, PromptError) as e:
        print(f"tracerl optimize: config error: {e}", file=sys.stderr)
        return 2
    except OptimizationInterrupted as e:
        print(f"tracerl optimize: {e}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("tracerl optimize: interrupted before the search started", file=sys.stderr)
        return 130
    print(json.dumps(result.summary(), indent=2))
    return 0

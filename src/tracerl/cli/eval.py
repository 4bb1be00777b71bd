"""`tracerl eval`: score a JSONL file or a trace store with metrics, or a checkpoint on
a task family's held-out split. Arguments and usage: `tracerl.cli.args`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from tracerl.cli.args import EVAL_DESCRIPTION
from tracerl.cli.args import add_eval_arguments as add_arguments
from tracerl.evals.catalogue import CATALOGUE
from tracerl.evals.catalogue import build as build_metric
from tracerl.evals.compare import compare
from tracerl.evals.evaluate import EvalReport, evaluate
from tracerl.evals.judges import JudgeConfig, RubricJudge
from tracerl.evals.metric import Metric
from tracerl.policy.zoo import MODELS

LIST_KEYS = ("required", "forbidden", "phrases", "imports", "calls", "scanners")

# CLI names -> constructors: the catalogue (tracerl.evals.catalogue, `tracerl metrics`).
METRICS: dict[str, Callable[..., Any]] = {e.name: e.build for e in CATALOGUE}


def _value(key: str, raw: str) -> Any:
    if raw.startswith("@"):
        return json.loads(Path(raw[1:]).read_text(encoding="utf-8"))
    if key in LIST_KEYS or "|" in raw:
        return tuple(part for part in raw.split("|") if part)
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw.strip('"')


def parse_metric(spec: str, args: argparse.Namespace) -> Metric:
    """`name:key=value,...` -> a Metric; bad names and options are ValueErrors."""
    name, _, rest = spec.partition(":")
    kwargs = {}
    for part in filter(None, rest.split(",")):
        key, eq, raw = part.partition("=")
        if not eq:
            raise ValueError(f"metric option {part!r} in {spec!r} is not key=value")
        kwargs[key.strip()] = _value(key.strip(), raw)
    if name == "rubric_judge":
        if not (args.judge_url and args.judge_model):
            raise ValueError("rubric_judge needs --judge-url and --judge-model")
        return RubricJudge(JudgeConfig(args.judge_url, args.judge_model), **kwargs)
    return build_metric(name, **kwargs)


def _load_data(args: argparse.Namespace) -> Any:
    """What evaluate() scores. Other sources (e.g. evaluating a checkpoint on a task
    family) add a branch here and return Trajectories."""
    return Path(args.data)


def _baseline(args: argparse.Namespace) -> EvalReport | None:
    if not getattr(args, "baseline", None):
        return None
    try:
        data = json.loads(Path(args.baseline).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"--baseline {args.baseline}: not JSON ({exc.msg})") from exc
    return EvalReport.from_dict(data)


def _report(report: EvalReport, args: argparse.Namespace, out: TextIO,
            baseline: EvalReport | None) -> None:
    full_dict = report.to_dict()
    if baseline is not None:
        full_dict["comparison"] = asdict(compare(baseline, report))
    full = json.dumps(full_dict, indent=2, default=str)
    if args.out:
        Path(args.out).write_text(full + "\n", encoding="utf-8")
    if args.json:
        out.write(full + "\n")
        return
    out.write(report.table(by=getattr(args, "by", None)) + "\n")
    exact = report.aggregates.get("exact_match")
    if exact is not None and exact.scored and not exact.mean:
        out.write("\nexact_match compares the whole answer (casefolded, spaces collapsed): "
                  "'Answer: 42' is not '42'. To drop a label: --metric "
                  "exact_match:prefix=Answer: ; to compare the last number: numeric_match\n")
    if baseline is not None:
        out.write(f"\nagainst the baseline {args.baseline} (paired sign-flip test):\n"
                  + compare(baseline, report).table() + "\n")


def _is_checkpoint(args: argparse.Namespace) -> bool:
    path = Path(args.data)
    if not args.metric and args.data in MODELS and not path.exists():
        return True  # a pretrained model by name (tracerl.policy.zoo)
    return not args.metric and path.is_dir() and (
        (path / "config.json").is_file() or (path / "checkpoints").is_dir()
        or (path / "adapter_config.json").is_file())


def _run_checkpoint(args: argparse.Namespace, out: TextIO) -> int:
    from tracerl.train.configlib import ConfigError
    from tracerl.train.evaluate import evaluate_checkpoint

    try:
        family = [f"task.family={args.family}"] if getattr(args, "family", None) else []
        report = evaluate_checkpoint(args.data, family + args.overrides, args.tasks, args.k,
                                     args.temperature, args.seed)
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        sys.stderr.write(f"tracerl eval: {exc}\n")
        return 2
    full = json.dumps(asdict(report), indent=2)
    if args.out:
        Path(args.out).write_text(full + "\n", encoding="utf-8")
    out.write((full if args.json else report.table()) + "\n")
    return 0


BFCL_ROLLOUT = ("rl.max_turns=64", "rl.max_turn_tokens=256", "rl.max_response_tokens=8192")
"""Rollout limits for a model evaluated on BFCL without a run of its own (a run keeps its
settings; key=value overrides after these win)."""


def _run_bfcl(args: argparse.Namespace, out: TextIO) -> int:
    """`--family bfcl`: BFCL's rules on the chosen split, reported as BFCL lays it out."""
    from tracerl.envs.bfcl.report import bfcl_report
    from tracerl.envs.bfcl.reward import verdict
    from tracerl.train.configlib import ConfigError
    from tracerl.train.evaluate import resolve, sample_checkpoint

    path = Path(args.data)
    is_run = resolve(path)[1] is not None if path.is_dir() else False
    overrides = ([] if is_run else list(BFCL_ROLLOUT)) + ["task.family=bfcl"]
    if args.categories:
        overrides.append(f"task.bfcl.categories=[{','.join(args.categories)}]")
    try:
        model_dir, _, groups = sample_checkpoint(
            args.data, overrides + list(args.overrides),
            lambda f: f.tasks_per_category(args.split, args.tasks_per_category),
            args.k, args.temperature, args.seed)
    except (ConfigError, ValueError, FileNotFoundError) as exc:
        sys.stderr.write(f"tracerl eval: {exc}\n")
        return 2
    rows = [(t.task.metadata["category"], t.task.id,
             t.outcome_reward is not None and verdict(t).valid)
            for g in groups for t in g.trajectories]
    report = bfcl_report(rows, str(model_dir), args.split, args.k)
    target = Path(args.out) if args.out else (
        (path if is_run else Path.cwd()) / f"bfcl_{args.split}.json")
    target.write_text(report.to_json() + "\n", encoding="utf-8")
    out.write((report.to_json() if args.json else report.table()) + f"\n\nwritten to {target}\n")
    return 0


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Exit code 0 when scored (failures are in the report), 2 on bad input."""
    out = out or sys.stdout
    bfcl_only = [flag for flag, given in (("--categories", getattr(args, "categories", None)),
                                          ("--tasks-per-category",
                                           getattr(args, "tasks_per_category", 0)),
                                          ("--split", getattr(args, "split", "heldout")
                                           != "heldout")) if given]
    if bfcl_only and getattr(args, "family", None) != "bfcl":
        sys.stderr.write(f"tracerl eval: {', '.join(bfcl_only)} are for --family bfcl\n")
        return 2
    if getattr(args, "family", None) == "bfcl" and (Path(args.data).exists()
                                                      or args.data in MODELS):
        return _run_bfcl(args, out)
    if not Path(args.data).exists() and args.data not in MODELS:  # checked first
        sys.stderr.write(f"tracerl eval: {args.data} does not exist (expected a .jsonl file, "
                         "a trace store, a run or model directory, or a model name: "
                         f"{', '.join(MODELS)})\n")
        return 2
    if _is_checkpoint(args):
        return _run_checkpoint(args, out)
    try:
        if getattr(args, "overrides", None) or getattr(args, "family", None):
            raise ValueError(f"unexpected arguments {args.overrides or ['--family']} "
                             "(--family and key=value overrides are for checkpoint mode)")
        if not args.metric:
            raise ValueError(f"give at least one --metric; names: {', '.join(METRICS)}")
        metrics = [parse_metric(spec, args) for spec in args.metric]
        baseline = _baseline(args)
        report = evaluate(metrics, _load_data(args), run=args.run)
        _report(report, args, out, baseline)
    except (ValueError, KeyError, FileNotFoundError, TypeError, ImportError) as exc:
        sys.stderr.write(f"tracerl eval: {exc}\n")
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tracerl eval", description=EVAL_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())

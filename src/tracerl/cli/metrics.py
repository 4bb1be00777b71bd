"""`tracerl metrics`: list the metric catalogue, with each metric's inputs and range.
Arguments and usage: `tracerl.cli.args`."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import TextIO

from tracerl.evals.catalogue import CATALOGUE, Entry
from tracerl.util.table import format_table


def first_line(entry: Entry) -> str:
    """The first sentence of the metric's docstring."""
    doc = (getattr(entry.build, "func", entry.build).__doc__ or "").strip()
    return " ".join(doc.split("\n\n")[0].split())


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    families = sorted({e.family for e in CATALOGUE})
    if args.family and args.family not in families:
        sys.stderr.write(f"tracerl metrics: unknown family {args.family!r}; "
                         f"families: {', '.join(families)}\n")
        return 2
    entries = [e for e in CATALOGUE if not args.family or e.family == args.family]
    if args.json:
        rows = [{**{k: v for k, v in asdict(e).items() if k != "build"},
                 "description": first_line(e)} for e in entries]
        out.write(json.dumps(rows, indent=2) + "\n")
        return 0
    table = [[e.name, e.family, e.range, e.kind + (f" [{e.extra}]" if e.extra else ""),
              e.inputs] for e in entries]
    out.write(format_table(["metric", "family", "range", "kind", "inputs"], table) + "\n")
    if args.verbose:
        out.write("\n" + "\n".join(f"{e.name}: {first_line(e)}" for e in entries) + "\n")
    out.write(f"\n{len(entries)} metrics; use one with `tracerl eval DATA --metric "
              "name:key=value`, or in Python as a Metric or a Reward (as_reward).\n")
    return 0

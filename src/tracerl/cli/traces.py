"""`tracerl traces list|show|export`: read a run's trace store from the shell.

`show` prints a trajectory as a conversation (trace/transcript.py), or its span tree with
`--spans`; without a trace id it shows the latest trajectory that matches the filters
(by rollout start time: the run's last training step or evaluation), and says so.
Arguments and usage: `tracerl.cli.args`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from tracerl.cli.args import TRACES_DESCRIPTION
from tracerl.cli.args import add_traces_arguments as add_arguments
from tracerl.trace import conventions as c
from tracerl.trace.export import write_conversations, write_otlp_json
from tracerl.trace.store import SpanRecord, TraceStore, TrajectorySummary, build_tree
from tracerl.trace.transcript import Style, format_transcript, wants_color
from tracerl.util.table import format_table


def _selected(store: TraceStore, args: argparse.Namespace, latest_first: bool = True
              ) -> list[TrajectorySummary]:
    """The trajectories the filters match: latest first (what `list` prints and `show`
    picks from; `--limit N` keeps the latest N), or in run order for `export`."""
    return store.trajectories(run=args.run, step=args.step, status=args.status, tool=args.tool,
                              min_reward=args.min_reward, max_reward=args.max_reward,
                              limit=getattr(args, "limit", None), latest_first=latest_first)


def _list(store: TraceStore, args: argparse.Namespace, out: TextIO) -> int:
    if args.runs:
        rows: list[Any] = store.runs()
        headers = ["run", "trajectories", "steps", "mean_reward", "errors"]
    else:
        rows = _selected(store, args)
        headers = ["trace_id", "run", "step", "group_index", "sample_index", "status",
                   "reward", "task_id"]
    if args.json:
        for r in rows:
            out.write(json.dumps(asdict(r)) + "\n")
        return 0
    table = [[getattr(r, h) for h in headers] for r in rows]
    out.write(format_table(headers, table) + "\n")
    return 0


def _summary(span: SpanRecord) -> str:
    a = span.attributes
    bits = []
    for key in (c.RL_REWARD, c.RL_STATUS, c.TOKENS_TOTAL, c.TOOL_NAME, c.EVAL_SCORE,
                c.GUARDRAIL_ACTION, c.RL_TURN_REWARD):
        if key in a:
            bits.append(f"{key}={a[key]}")
    if span.status_code == "ERROR":
        bits.append(f"ERROR {span.status_message}")
    return " ".join(bits)


def _write_spans(spans: list[SpanRecord], attributes: bool, out: TextIO) -> None:
    for depth, span in build_tree(spans).walk():
        pad = "  " * depth
        line = f"{pad}{span.kind or '-'} {span.name} ({span.duration_ms:.1f} ms) {_summary(span)}"
        out.write(line.rstrip() + "\n")
        if attributes:
            for key, value in sorted(span.attributes.items()):
                out.write(f"{pad}    {key} = {json.dumps(value)[:200]}\n")


def _pick(store: TraceStore, args: argparse.Namespace) -> tuple[str, str]:
    """The trace to show and a note on how it was chosen ("" when named)."""
    if args.trace_id:
        return store.resolve_trace_id(args.trace_id), ""
    rows = _selected(store, args)
    if not rows:
        raise KeyError(f"no trajectory in {store.path} matches the filters")
    latest = rows[0]
    if len(rows) == 1:
        return latest.trace_id, ""
    note = (f"(the latest of {len(rows)} matching trajectories, the first row of "
            f"tracerl traces list {args.store}; to pick another: tracerl traces show "
            f"{args.store} ID)")
    return latest.trace_id, note


def _show(store: TraceStore, args: argparse.Namespace, out: TextIO) -> int:
    trace_id, note = _pick(store, args)
    spans = store.spans(trace_id)
    if not spans:
        raise KeyError(f"no spans for trace {trace_id}")
    if args.spans or args.attributes:
        _write_spans(spans, args.attributes, out)
        return 0
    style = Style(args.color == "always" or (args.color == "auto" and wants_color(out)))
    try:
        text = format_transcript(spans, style, full=args.full)
    except ValueError:  # instrumented agent code, not a recorded Trajectory
        out.write(f"trace {trace_id} holds no recorded trajectory; its spans:\n")
        _write_spans(spans, False, out)
        return 0
    out.write((f"{note}\n\n" if note else "") + text)
    return 0


def _export(store: TraceStore, args: argparse.Namespace, out: TextIO) -> int:
    ids = [t.trace_id for t in _selected(store, args, latest_first=False)]
    writer = write_conversations if args.format == "openai" else write_otlp_json
    if args.out:
        with Path(args.out).open("w", encoding="utf-8") as f:
            n = writer(store, ids, f)
        sys.stderr.write(f"wrote {len(ids)} trajectories ({n} records) to {args.out}\n")
    else:
        writer(store, ids, out)
    return 0


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run one `tracerl traces` subcommand; returns the exit code (2 on bad input)."""
    out = out or sys.stdout
    commands = {"list": _list, "show": _show, "export": _export}
    try:
        with TraceStore(args.store) as store:
            return commands[args.traces_command](store, args, out)
    except BrokenPipeError:  # `| head`, or `| less` quit early: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (FileNotFoundError, KeyError, ValueError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        sys.stderr.write(f"tracerl traces: {message}\n")
        return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tracerl traces", description=TRACES_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())

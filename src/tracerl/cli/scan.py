"""`tracerl scan`: run the guard's scanners over files or standard input.

Arguments: `tracerl.cli.args`. Exit status as grep's: 0 nothing found at or above
`--min-score`, 1 something found, 2 the input or the options were wrong. With `--as
observation|prompt`, the Guard's decision for that kind of text instead (its rules and
per-source thresholds, tracerl.guard.config): 1 when any input is blocked or flagged.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict

from tracerl.cli.args import SCAN_DESCRIPTION
from tracerl.cli.args import add_scan_arguments as add_arguments
from tracerl.guard.findings import Finding
from tracerl.guard.scan import resolve, scan


def texts(paths: list[str], by_line: bool) -> Iterator[tuple[str, str]]:
    """(source, text) for each input: a whole file, or each line of it with `by_line`.
    "-" (or no path) is standard input; bytes that are not UTF-8 become U+FFFD."""
    for path in paths or ["-"]:
        if path == "-":
            data, name = sys.stdin.buffer.read(), "<stdin>"
        else:
            with open(path, "rb") as fh:  # OSError names the path
                data, name = fh.read(), path
        text = data.decode("utf-8", errors="replace")
        if by_line:
            for n, line in enumerate(text.splitlines(), 1):
                yield f"{name}:{n}", line
        else:
            yield name, text


def _line(source: str, f: Finding) -> str:
    detail = f"  {f.detail}" if f.detail else ""
    return f"{source}:{f.start}-{f.end}  {f.scanner}/{f.kind}  {f.score:.2f}{detail}"


def decide(args: argparse.Namespace) -> int:
    """`--as observation|prompt`: the Guard's decision per input (its default rules)."""
    from tracerl.guard.decision import describe
    from tracerl.guard.pipeline import Guard

    if args.scanners or args.min_score != 0.5:
        print("tracerl scan: --as decides with the Guard's rules; --scanners and "
              "--min-score do not apply", file=sys.stderr)
        return 2
    guard = Guard()
    check = guard.check_prompt if args.target == "prompt" else guard.check_observation
    triggered = 0
    try:
        for source, text in texts(args.paths, args.lines):
            d = check(text)
            triggered += d.triggered
            if args.json:
                print(json.dumps({"source": source, "target": d.target,
                                  "action": d.action.value, "reason": d.reason,
                                  "findings": [asdict(f) for f in d.findings],
                                  "errors": list(d.errors)}, ensure_ascii=False))
            else:
                why = describe(d.findings) if d.findings else "nothing found"
                print(f"{source}  {d.action.value}  {why}")
    except OSError as exc:
        print(f"tracerl scan: cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 1 if triggered else 0


def run(args: argparse.Namespace) -> int:
    """Print each finding at or above --min-score; see the module for the exit status."""
    if getattr(args, "target", None):
        return decide(args)
    names = [s.strip() for s in args.scanners.split(",") if s.strip()] if args.scanners else None
    try:
        scanners = resolve(names)
    except ValueError as exc:
        print(f"tracerl scan: {exc}", file=sys.stderr)
        return 2
    found = 0
    try:
        for source, text in texts(args.paths, args.lines):
            for f in scan(text, scanners, min_score=args.min_score):
                found += 1
                if args.json:
                    print(json.dumps({"source": source, **asdict(f)}, ensure_ascii=False))
                else:
                    print(_line(source, f))
    except OSError as exc:
        print(f"tracerl scan: cannot read {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 1 if found else 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="tracerl scan", description=SCAN_DESCRIPTION)
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())

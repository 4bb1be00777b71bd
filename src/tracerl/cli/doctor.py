"""`tracerl doctor`: report which sandbox isolation layers work on this host.

Arguments: `tracerl.cli.args`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from tracerl.cli.args import DOCTOR_DESCRIPTION
from tracerl.cli.args import add_doctor_arguments as add_arguments
from tracerl.sandbox.doctor import isolation_report


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 1 when strict isolation is unavailable."""
    report = isolation_report()
    if args.json:
        print(json.dumps({**asdict(report), "strict_ok": report.strict_ok}, indent=2))
    else:
        print("sandbox isolation:")
        for name, ok in report.layers.items():
            note = report.notes.get(name, "")
            print(f"  {'ok  ' if ok else 'MISSING'} {name}{'  (' + note + ')' if note else ''}")
        verdict = "available" if report.strict_ok else "UNAVAILABLE (best_effort only)"
        print(f"isolation='strict': {verdict}")
    return 0 if report.strict_ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(prog="tracerl doctor", description=DOCTOR_DESCRIPTION)
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())

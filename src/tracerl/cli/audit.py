"""`tracerl audit REWARD`: run the known reward hacks against a reward.

Exit code 0 when no hack scored above 0, 1 when any did, 2 when REWARD is invalid.
Arguments: `tracerl.cli.args`.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from tracerl.cli.args import AUDIT_DESCRIPTION
from tracerl.cli.args import add_audit_arguments as add_arguments
from tracerl.rewards.audit import AuditReport, audit, resolve_reward

BFCL_REWARDS = {"bfcl": "bfcl", "bfcl_partial": "partial"}
"""Audit names of the BFCL family's rewards (`task.bfcl.reward`)."""


def _bfcl_report(name: str) -> AuditReport:
    """A BFCL reward against the family's own hacks, played on real BFCL entries."""
    from tracerl.envs.bfcl.hacks import HACKS
    from tracerl.envs.bfcl.reward import REWARDS

    return audit(REWARDS[BFCL_REWARDS[name]](), hacks=HACKS)


def run(args: argparse.Namespace) -> int:
    options = {"timeout_s": args.timeout} if args.reward in ("code_tests", "math_answer") else {}
    if args.reward in BFCL_REWARDS:
        report = _bfcl_report(args.reward)
    else:
        try:
            reward = resolve_reward(args.reward, **options)
        except ValueError as exc:
            print(f"tracerl audit: {exc}")
            return 2
        report = audit(reward, categories=args.category)
    if args.json:
        print(json.dumps({"reward": report.reward, "ok": report.ok,
                          "results": [asdict(r) for r in report.results]}, indent=2))
        return 0 if report.ok else 1
    for r in report.results:
        if r.verdict in ("exploited", "unjudged") or args.verbose:
            score = "-" if r.score is None else f"{r.score:.3f}"
            extra = f"  ({r.error})" if r.error else ""
            print(f"  {r.verdict.upper():15s} {score:>6s}  [{r.category}] {r.hack}: "
                  f"{r.description}{extra}")
    print(report.summary())
    if not report.ok:
        print(f"EXPLOITED by: {', '.join(r.hack for r in report.exploited)}")
    return 0 if report.ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(prog="tracerl audit", description=AUDIT_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args())


if __name__ == "__main__":
    raise SystemExit(main())

"""The tables and lists benchmarks/bfcl_agreement.py prints, from its rows.

Three agreements, each over the same outputs:
- checker: BFCL's runner + checker and tracerl's check_single_turn / check_multi_turn,
  both given every call the text holds (tracerl's parse; multi-turn steps without a
  call left out, as BFCL's runner leaves them out): the contract under test;
- reward, from BFCL's decoding: BFCL's whole pipeline from the raw text (its Hermes
  decoder, runner, checker) against tracerl's env + reward playing the same text as
  a policy's actions: what a leaderboard run and a tracerl eval would each report;
- reward, from tracerl's decoding: BFCL's runner + checker given what tracerl's
  reward scored (after the env's refusals): the checker again, on the reward's input.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any


def summarize(rows: list[dict]) -> dict[str, dict[str, int]]:
    per: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        episode = r["reward_valid"] is not None
        for key in (r["category"], "overall"):
            c = per[key]
            c["n"] += 1
            c["bfcl_valid"] += r["bfcl_text_valid"]
            c["agree_checker"] += r["bfcl_checker_valid"] == r["checker_valid"]
            c["episodes"] += episode
            c["agree_reward"] += episode and r["bfcl_text_valid"] == r["reward_valid"]
            c["agree_reward_input"] += episode and r["bfcl_env_valid"] == r["reward_valid"]
    return {k: dict(v) for k, v in per.items()}


def _pct(a: int, n: int) -> str:
    return f"{a} ({a / n:.1%})" if n else "-"


def _short(r: dict, width: int = 160) -> str:
    text = r["text"] if r["turns"] is None else json.dumps(r["turns"])
    return text.replace("\n", "\\n")[:width]


def _table(summary: dict[str, dict[str, int]]) -> None:
    print("\n| category | outputs | BFCL valid | checker agrees | episodes "
          "| reward agrees (BFCL decoding) | reward agrees (tracerl decoding) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key in [*sorted(k for k in summary if k != "overall"), "overall"]:
        c = summary[key]
        print(f"| {key} | {c['n']} | {c['bfcl_valid']} | {_pct(c['agree_checker'], c['n'])} "
              f"| {c['episodes']} | {_pct(c['agree_reward'], c['episodes'])} "
              f"| {_pct(c['agree_reward_input'], c['episodes'])} |")


def _listing(title: str, rows: list[dict], bfcl: str, ours: str, why: tuple[str, str]) -> None:
    print(f"\n{len(rows)} {title}")
    for r in rows:
        print(f"- {r['category']} {r['id']} [{r['perturbation']}] BFCL={r[bfcl]} "
              f"tracerl={r[ours]}\n    output: {_short(r)}\n"
              f"    BFCL: {str(r[why[0]])[:200]}\n    tracerl: {str(r[why[1]])[:200]}")


def _grouped(title: str, rows: list[dict]) -> None:
    print(f"\n{len(rows)} {title}")
    for tag, n in sorted(Counter(r["perturbation"] for r in rows).items()):
        r = next(r for r in rows if r["perturbation"] == tag)
        print(f"- {tag}: {n}, e.g. {r['id']} BFCL={r['bfcl_text_valid']} "
              f"tracerl={r['reward_valid']}\n    output: {_short(r)}\n"
              f"    BFCL decoded: {str(r['bfcl_decoded'])[:160]}\n"
              f"    tracerl scored: {str(r['env_decoded'])[:160]}\n"
              f"    tracerl: {str(r['reward_error'])[:160]}")


def print_report(rows: list[dict], summary: dict[str, Any], seconds: float) -> None:
    _table(summary)
    print(f"({seconds:.0f} s)")
    _listing("checker disagreements (both checkers on every call the text holds):",
             [r for r in rows if r["bfcl_checker_valid"] != r["checker_valid"]],
             "bfcl_checker_valid", "checker_valid", ("bfcl_checker_error", "checker_error"))
    played = [r for r in rows if r["reward_valid"] is not None]
    _listing("checker disagreements on the reward's input (the calls the env ran):",
             [r for r in played if r["bfcl_env_valid"] != r["reward_valid"]],
             "bfcl_env_valid", "reward_valid", ("bfcl_env_error", "reward_error"))
    _grouped("reward disagreements with BFCL's pipeline from the raw text, by perturbation "
             "(decoder and env policy, not checker: see the two lists above):",
             [r for r in played if r["bfcl_text_valid"] != r["reward_valid"]])
    _listing("multi-turn checker disagreements if steps without a call reach "
             "check_multi_turn (BFCL's runner drops them before its checker):",
             [r for r in rows if r["turns"] is not None
              and r["checker_valid_with_empty_steps"] != r["bfcl_checker_valid"]],
             "bfcl_checker_valid", "checker_valid_with_empty_steps",
             ("bfcl_checker_error", "checker_error"))

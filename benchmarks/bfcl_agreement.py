"""Does tracerl score BFCL outputs the way BFCL's own checker does? (issue 30; goal 100%)

    .venv/bin/python benchmarks/bfcl_agreement.py                  # 12 ids per category
    .venv/bin/python benchmarks/bfcl_agreement.py --per-category 4 # quicker
    .venv/bin/python benchmarks/bfcl_agreement.py --report runs/bfcl_agreement.json

1. A throwaway venv (default /tmp/tracerl-bfcl-venv, python3.11) gets bfcl-eval at the
   version tracerl reads its data from, plus `soundfile`, which its checker's import
   chain needs; it is made once and reused, and never touches tracerl's venv (bfcl-eval
   pins numpy 1.26 and a dozen provider SDKs).
2. Outputs are built from BFCL v4's own data (the same wheel's `bfcl_eval/data`, read
   by tracerl.util.wheels): for each category, `--per-category` ids drawn with
   `--seed`, each answered right in every way the accepted answers allow and wrong in
   every systematic way benchmarks/bfcl_agreement_outputs.py knows, malformed text
   included. All of it is generated here; nothing is committed.
3. BFCL scores every output in the throwaway venv (benchmarks/bfcl_agreement_runner.py:
   its eval runner's per-entry functions around `ast_checker` / `multi_turn_checker`),
   from the raw text with its own Hermes decoder, and again from tracerl's decoding.
4. tracerl scores the same outputs: the text parsed by `tracerl.tools.parse_tool_calls`
   (malformed blocks dropped, as BFCL's decoder for this format drops them), then
   `tracerl.envs.bfcl.check_single_turn` / `check_multi_turn`.
5. Prints agreement per category and overall, checker against checker (both on
   tracerl's decoding of the text: the headline, since the contract under test is the
   checker) and end to end (BFCL from the text with its own decoder), lists every
   checker disagreement and every end-to-end one the decoders explain, and writes
   all of it, output by output, as JSON.

BFCL has no one decoder for Hermes text: the Qwen FC handler's, used here, reads only
the layout Qwen's template writes (newlines inside the tags) and drops blocks it cannot
parse; other handlers fail the whole output instead. Where tracerl's parser reads a
text differently, the end-to-end columns show it and the report names the case.

Exit status 0 only at 100% checker agreement.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bfcl_agreement_outputs import Output, build_outputs, load_category, read_jsonl

from tracerl.envs.bfcl import check_multi_turn, check_single_turn
from tracerl.envs.bfcl.calls import format_call
from tracerl.tools import parse_tool_calls
from tracerl.util.wheels import WheelData, wheel_data

BFCL_VERSION = "2026.3.23"
CATEGORIES = [
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance", "multi_turn_base", "multi_turn_miss_param", "multi_turn_miss_func",
    "multi_turn_long_context",
]
RUNNER = Path(__file__).with_name("bfcl_agreement_runner.py")


def ensure_venv(venv: Path, python: str) -> Path:
    """The venv's interpreter, with bfcl-eval importable; made on first use."""
    py = venv / "bin" / "python"
    marker = venv / f".bfcl-eval-{BFCL_VERSION}"
    if not marker.exists():
        print(f"making {venv} (bfcl-eval=={BFCL_VERSION}; a few minutes, once)", flush=True)
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", f"bfcl-eval=={BFCL_VERSION}",
                        "soundfile"], check=True)
        probe = "import bfcl_eval.eval_checker.eval_runner"
        subprocess.run([str(py), "-c", probe], check=True, env=_bfcl_env(venv))
        marker.touch()
    return py


def _bfcl_env(venv: Path) -> dict[str, str]:
    # BFCL writes result/score/lock folders under its project root at import time
    root = venv / "bfcl-project-root"
    root.mkdir(exist_ok=True)
    return {**os.environ, "BFCL_PROJECT_ROOT": str(root), "PYTHONPATH": ""}


# -- tracerl's side ------------------------------------------------------------------

def decode(text: str) -> list[dict[str, dict]]:
    """Single-turn: BFCL's decoded form `[{name: {param: value}}]` of tracerl's parse."""
    return [{c.name: dict(c.arguments)} for c in parse_tool_calls(text).calls]


def decode_turns(turns: list[list[str]], *, keep_empty: bool = False) -> list[list[list[str]]]:
    """Multi-turn: each step's calls as call strings; steps without a call left out, as
    BFCL's runner leaves them out (`keep_empty` keeps them, to test the checker's
    reading of a turn of empty steps)."""
    out = []
    for turn in turns:
        steps = [[format_call(c.name, dict(c.arguments)) for c in parse_tool_calls(s).calls]
                 for s in turn]
        out.append([s for s in steps if s or keep_empty])
    return out


def tracerl_verdict(out: Output, entry: dict, answer: Any, decoded: Any) -> dict:
    try:
        if out.turns is not None:
            v = check_multi_turn(entry, answer, decoded)
        else:
            v = check_single_turn(out.category, entry["function"], answer or [], decoded)
    except Exception as e:  # noqa: BLE001 -- a crash is a disagreement to list, not the end
        return {"valid": None, "error": f"raised {type(e).__name__}: {e}"}
    return {"valid": bool(v.valid), "error": v.error}


# -- the comparison ------------------------------------------------------------------

def run_bfcl(py: Path, venv: Path, records: list[dict]) -> dict[str, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in records))
        subprocess.run([str(py), str(RUNNER), str(src), str(dst)], check=True,
                       env=_bfcl_env(venv))
        return {r["uid"]: r for r in read_jsonl(dst)}


def load_truth(data: Path, categories: list[str]) -> dict[str, tuple[dict, Any]]:
    """{id: (entry, accepted answer)} over `categories`."""
    return {e["id"]: (e, a) for c in categories for e, a in load_category(data, c)}


def compare(outputs: list[Output], truth: dict, bfcl: dict[str, dict], decoded: dict
            ) -> list[dict]:
    rows = []
    for out in outputs:
        entry, answer = truth[out.id]
        b, dec = bfcl[out.uid], decoded[out.uid]
        t = tracerl_verdict(out, entry, answer, dec)
        kept = None if out.turns is None else tracerl_verdict(
            out, entry, answer, decode_turns(out.turns, keep_empty=True))["valid"]
        rows.append({
            **asdict(out), "tracerl_decoded": dec, "bfcl_decoded": b["bfcl_decoded"],
            "bfcl_valid": b["text_valid"], "bfcl_error": b["text_error"],
            "bfcl_valid_on_tracerl_decoding": b["decoded_valid"],
            "bfcl_error_on_tracerl_decoding": b["decoded_error"],
            "tracerl_valid": t["valid"], "tracerl_error": t["error"],
            "tracerl_valid_with_empty_steps": kept,
        })
    return rows


def summarize(rows: list[dict]) -> dict[str, Any]:
    per: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        for key in (r["category"], "overall"):
            c = per[key]
            c["n"] += 1
            c["bfcl_valid"] += r["bfcl_valid"]
            c["agree"] += r["bfcl_valid"] == r["tracerl_valid"]
            c["agree_checker"] += r["bfcl_valid_on_tracerl_decoding"] == r["tracerl_valid"]
            c["decoding_differs"] += _decoding_differs(r)
    return {k: dict(v) for k, v in per.items()}


def _decoding_differs(r: dict) -> bool:
    if r["turns"] is None:
        return r["bfcl_decoded"] != r["tracerl_decoded"]
    # BFCL's steps as it keeps them (decoded, non-empty), call strings compared as ASTs
    kept = [[s for s in t if s] for t in r["bfcl_decoded"]] \
        if isinstance(r["bfcl_decoded"], list) else r["bfcl_decoded"]
    return _calls_ast(kept) != _calls_ast(r["tracerl_decoded"])


def _calls_ast(turns: Any) -> Any:
    def one(call: str) -> str:
        try:
            return ast.dump(ast.parse(call.strip(), mode="eval"))
        except SyntaxError:
            return call
    return [[[one(c) for c in step] for step in turn] for turn in turns] \
        if isinstance(turns, list) else turns


def _short(r: dict) -> str:
    text = r["text"] if r["text"] is not None else json.dumps(r["turns"])
    return text.replace("\n", "\\n")[:160]


def print_report(rows: list[dict], summary: dict[str, Any], seconds: float) -> None:
    print("\n| category | outputs | BFCL valid | agree (checker) | agree (end to end) "
          "| decoding differs |")
    print("|---|---:|---:|---:|---:|---:|")
    for key in [*sorted(k for k in summary if k != "overall"), "overall"]:
        c = summary[key]
        print(f"| {key} | {c['n']} | {c['bfcl_valid']} "
              f"| {c['agree_checker']} ({c['agree_checker'] / c['n']:.1%}) "
              f"| {c['agree']} ({c['agree'] / c['n']:.1%}) | {c['decoding_differs']} |")
    print(f"({seconds:.0f} s)")
    checker = [r for r in rows if r["bfcl_valid_on_tracerl_decoding"] != r["tracerl_valid"]]
    print(f"\n{len(checker)} checker disagreements (both checkers on tracerl's decoding):")
    for r in checker:
        print(f"- {r['category']} {r['id']} [{r['perturbation']}] "
              f"BFCL={r['bfcl_valid_on_tracerl_decoding']} tracerl={r['tracerl_valid']}\n"
              f"    output: {_short(r)}\n"
              f"    BFCL: {r['bfcl_error_on_tracerl_decoding'][:200]}\n"
              f"    tracerl: {str(r['tracerl_error'])[:200]}")
    kept = [r for r in rows if r["turns"] is not None
            and r["tracerl_valid_with_empty_steps"] != r["bfcl_valid_on_tracerl_decoding"]]
    print(f"\n{len(kept)} multi-turn disagreements when the steps without a call are passed "
          "to check_multi_turn too (BFCL's runner drops them before its checker):")
    for r in kept:
        print(f"- {r['category']} {r['id']} [{r['perturbation']}] BFCL="
              f"{r['bfcl_valid_on_tracerl_decoding']} tracerl={r['tracerl_valid_with_empty_steps']}"
              f"\n    output: {_short(r)}")
    decoding = [r for r in rows if r["bfcl_valid"] != r["tracerl_valid"] and _decoding_differs(r)]
    print(f"\n{len(decoding)} end-to-end disagreements where the decoders differ "
          "(BFCL's Hermes decoder vs tracerl.tools.parse_tool_calls), by perturbation:")
    for tag, n in sorted(Counter(r["perturbation"] for r in decoding).items()):
        r = next(r for r in decoding if r["perturbation"] == tag)
        print(f"- {tag}: {n}, e.g. {r['id']} BFCL={r['bfcl_valid']} tracerl={r['tracerl_valid']}"
              f"\n    output: {_short(r)}\n    BFCL decoded: {str(r['bfcl_decoded'])[:160]}"
              f"\n    tracerl decoded: {str(r['tracerl_decoded'])[:160]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-category", type=int, default=12, help="ids drawn per category")
    ap.add_argument("--seed", type=int, default=0, help="seed for ids and perturbations")
    ap.add_argument("--categories", nargs="*", default=CATEGORIES, help="BFCL categories")
    ap.add_argument("--venv", type=Path, default=Path("/tmp/tracerl-bfcl-venv"),
                    help="the throwaway venv for bfcl-eval")
    ap.add_argument("--python", default="python3.11", help="interpreter that makes the venv")
    ap.add_argument("--report", type=Path, default=Path("runs/bfcl_agreement.json"),
                    help="where the JSON report goes")
    args = ap.parse_args()
    started = time.perf_counter()
    py = ensure_venv(args.venv, args.python)
    data = wheel_data(WheelData("bfcl-eval", BFCL_VERSION, "bfcl_eval/data"))
    outputs = build_outputs(data, args.categories, args.per_category, args.seed)
    decoded = {o.uid: (decode_turns(o.turns) if o.turns is not None else decode(o.text or ""))
               for o in outputs}
    records = [{**asdict(o), "decoded": decoded[o.uid], "decoded_turns": decoded[o.uid]}
               for o in outputs]
    for r in records:
        if r["turns"] is None:
            del r["turns"], r["decoded_turns"]
    print(f"{len(outputs)} outputs over {len(args.categories)} categories", flush=True)
    bfcl = run_bfcl(py, args.venv, records)
    rows = compare(outputs, load_truth(data, args.categories), bfcl, decoded)
    summary = summarize(rows)
    seconds = time.perf_counter() - started
    print_report(rows, summary, seconds)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps({"bfcl_eval": BFCL_VERSION, "seed": args.seed,
                                       "per_category": args.per_category, "seconds": seconds,
                                       "summary": summary, "outputs": rows}, indent=1))
    print(f"report: {args.report}")
    overall = summary["overall"]
    return 0 if overall["agree_checker"] == overall["n"] else 1


if __name__ == "__main__":
    sys.exit(main())

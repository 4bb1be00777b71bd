"""Does tracerl score BFCL outputs the way BFCL's own checker does? (issue 30; goal 100%)

    .venv/bin/python benchmarks/bfcl_agreement.py                  # 12 ids per category
    .venv/bin/python benchmarks/bfcl_agreement.py --per-category 3 # quicker
    .venv/bin/python benchmarks/bfcl_agreement.py --extra-outputs runs/bfcl_smollm2.jsonl

1. A throwaway venv (default /tmp/tracerl-bfcl-venv, python3.11) gets bfcl-eval at the
   version tracerl reads its data from (tracerl.envs.bfcl.data.VERSION), plus
   `soundfile`, which its checker's import chain needs; it is made once and reused,
   and never touches tracerl's venv (bfcl-eval pins numpy 1.26 and a dozen provider
   SDKs).
2. Outputs are built from BFCL v4's own data (the same wheel's `bfcl_eval/data`, as
   tracerl.envs.bfcl.data loads it): for each category, `--per-category` ids drawn with
   `--seed`, each answered right in every way the accepted answers allow and wrong in
   every systematic way benchmarks/bfcl_agreement_outputs.py knows, malformed text
   included; optionally, real model replies (`--extra-outputs`, written by
   benchmarks/bfcl_agreement_smollm.py). All generated here; nothing is committed.
3. tracerl scores each output twice: `check_single_turn` / `check_multi_turn` on every
   call the text holds (`tracerl.tools.parse_tool_calls`), and the reward
   (envs/bfcl/reward.py) after the text is played through BfclEnv as the policy's
   actions (envs/bfcl/hacks.py `play`), which is what training and `tracerl eval` see.
4. BFCL scores each output in the throwaway venv (benchmarks/bfcl_agreement_runner.py:
   the per-entry functions of its eval runner, around `ast_checker` /
   `multi_turn_checker`) from the raw text with its own Hermes decoder, and from each
   of tracerl's two decodings.
5. Prints agreement per category and overall (benchmarks/bfcl_agreement_report.py):
   checker against checker on the same calls (the headline: the contract under test),
   reward against BFCL's pipeline from the raw text, and checker against checker on the
   reward's input; lists every disagreement, and writes every output with every
   verdict as JSON (`--report`).

BFCL has no one decoder for Hermes text: the Qwen FC handler's, used here, reads only
the layout Qwen's template writes (newlines inside the tags), drops blocks it cannot
parse and fails a reply whose "arguments" is not an object; other handlers differ
again. Where tracerl's parser or env reads a text differently (tracerl's env refuses
calls to functions not offered and arguments that break the schema; its reward fails a
single-turn reply with a malformed block), the reward column shows it and the report
names the case: those are decoder and env policy, not checker, disagreements.

Exit status 0 only at 100% checker agreement.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bfcl_agreement_outputs import Output, build_outputs
from bfcl_agreement_report import print_report, summarize

from tracerl.envs.bfcl import check_multi_turn, check_single_turn
from tracerl.envs.bfcl.answers import decoded as as_decoded
from tracerl.envs.bfcl.calls import format_call
from tracerl.envs.bfcl.data import VERSION, BfclEntry, entry_by_id
from tracerl.envs.bfcl.hacks import play
from tracerl.envs.bfcl.reward import decoded_multi, decoded_single, verdict
from tracerl.tools import parse_tool_calls

BFCL_VERSION = VERSION
"""The bfcl-eval release whose checker is run: the one tracerl reads its data from."""
CATEGORIES = [
    "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
    "live_irrelevance", "multi_turn_base", "multi_turn_miss_param", "multi_turn_miss_func",
    "multi_turn_long_context",
]
RUNNER = Path(__file__).with_name("bfcl_agreement_runner.py")
NOT_AN_EPISODE = {"extra_turn": "an episode ends after its last user turn"}
"""Outputs only the checker level can score: no episode in the env can produce them."""


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

def parsed(out: Output, *, keep_empty: bool = False) -> Any:
    """Every call the text holds, in BFCL's decoded form, as BFCL's runner would hand
    them to its checker (multi-turn: steps without a call left out unless `keep_empty`)."""
    if out.turns is None:
        return as_decoded(parse_tool_calls(out.text or "").calls)
    steps = [[[format_call(c.name, dict(c.arguments)) for c in parse_tool_calls(s).calls]
              for s in turn] for turn in out.turns]
    return [[s for s in turn if s or keep_empty] for turn in steps]


def checker_verdict(out: Output, entry: BfclEntry, decoded: Any) -> dict:
    """check_single_turn / check_multi_turn on `decoded`; a crash is a verdict to list."""
    try:
        if out.turns is not None:
            v = check_multi_turn(entry.raw, entry.answer, decoded)
        else:
            v = check_single_turn(out.category, list(entry.functions), entry.answer, decoded)
    except Exception as e:  # noqa: BLE001
        return {"valid": None, "error": f"raised {type(e).__name__}: {e}"}
    return {"valid": bool(v.valid), "error": v.error}


def episode(out: Output) -> dict:
    """The text played through BfclEnv as a policy's actions, scored by the reward."""
    entry = entry_by_id(out.category, out.id)
    actions = [a for turn in out.turns for a in turn] if out.turns is not None \
        else [out.text or "", "Done."]
    try:
        traj = play(entry, actions)
        dec = decoded_multi(traj, len(entry.turns)) if entry.multi_turn else decoded_single(traj)
        v = verdict(traj)
    except Exception as e:  # noqa: BLE001
        return {"valid": None, "error": f"raised {type(e).__name__}: {e}", "decoded": None}
    return {"valid": bool(v.valid), "error": v.error, "decoded": dec}


# -- the comparison ------------------------------------------------------------------

def run_bfcl(py: Path, venv: Path, records: list[dict]) -> dict[str, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        src.write_text("".join(json.dumps(r) + "\n" for r in records))
        subprocess.run([str(py), str(RUNNER), str(src), str(dst)], check=True,
                       env=_bfcl_env(venv))
        return {r["uid"]: r for r in map(json.loads, dst.read_text().splitlines())}


def score_tracerl(outputs: list[Output]) -> list[dict]:
    rows = []
    for out in outputs:
        entry = entry_by_id(out.category, out.id)
        dec = parsed(out)
        checker = checker_verdict(out, entry, dec)
        kept = None if out.turns is None else checker_verdict(
            out, entry, parsed(out, keep_empty=True))["valid"]
        ep = {"valid": None, "error": NOT_AN_EPISODE[out.perturbation], "decoded": None} \
            if out.perturbation in NOT_AN_EPISODE else episode(out)
        rows.append({**asdict(out), "decoded": dec, "env_decoded": ep["decoded"],
                     "checker_valid": checker["valid"], "checker_error": checker["error"],
                     "checker_valid_with_empty_steps": kept,
                     "reward_valid": ep["valid"], "reward_error": ep["error"]})
    return rows


def runner_records(rows: list[dict]) -> list[dict]:
    out = []
    for r in rows:
        rec = {k: r[k] for k in ("uid", "category", "id", "decoded", "env_decoded")}
        rec["text" if r["turns"] is None else "turns"] = r["text"] if r["turns"] is None \
            else r["turns"]
        out.append({**rec, "episode": r["reward_valid"] is not None})
    return out


def model_outputs(path: Path) -> list[Output]:
    """Real replies, scored like the generated ones; their perturbation names the file."""
    tag = path.stem
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Output(f"{r['id']}/{tag}:{k}", r["category"], r["id"], tag, text=r["text"])
            for k, r in enumerate(rows)]


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
    ap.add_argument("--extra-outputs", type=Path, default=None,
                    help="JSONL of real model replies {category, id, text} to score too "
                         "(benchmarks/bfcl_agreement_smollm.py writes one)")
    args = ap.parse_args()
    started = time.perf_counter()
    py = ensure_venv(args.venv, args.python)
    outputs = build_outputs(args.categories, args.per_category, args.seed)
    if args.extra_outputs is not None:
        outputs += model_outputs(args.extra_outputs)
    categories = sorted({o.category for o in outputs})
    print(f"{len(outputs)} outputs over {len(categories)} categories", flush=True)
    rows = score_tracerl(outputs)
    bfcl = run_bfcl(py, args.venv, runner_records(rows))
    for r in rows:
        b = bfcl[r["uid"]]
        r.update(bfcl_decoded=b["bfcl_decoded"], bfcl_text_valid=b["text_valid"],
                 bfcl_text_error=b["text_error"], bfcl_checker_valid=b["decoded_valid"],
                 bfcl_checker_error=b["decoded_error"], bfcl_env_valid=b["env_valid"],
                 bfcl_env_error=b["env_error"])
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

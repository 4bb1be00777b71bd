"""The whole deterministic metric catalogue over 1,000 items: is evaluate() fast enough
to score every rollout as a reward? Target (issue 16): under 2 s on the 2-core dev VM.

    .venv/bin/python benchmarks/evals.py               # 1,000 items, 3 repetitions
    .venv/bin/python benchmarks/evals.py --items 200   # quicker
    .venv/bin/python benchmarks/evals.py --baseline ../main/src --compare-only
    .venv/bin/python benchmarks/evals.py --baseline ../main/src --same-reports --compare-only

Items are agent conversations of the kind the catalogue is for, built from a seed: a
question, two or three tool-calling turns (search, fetch, sometimes a malformed call or
a tool error), and a final answer of 40-90 words with citations, a JSON object, a list
and sometimes a Python block; each with every reference field some metric reads
(answer, phrase lists, schema, expected JSON, retrieved and relevant ids, reference
calls, step budget, tags). Every catalogue entry of kind "deterministic" or
"measurement" runs on every item.

Every timed evaluation is a first one: items are built anew from the records and
metrics anew from the catalogue before each (untimed), so it pays for the views of the
answer that metrics share (tokens, parsed JSON, reference calls) and starts with empty
memos (action_safety's findings per argument text). An evaluation repeated on the same
objects would measure cached work.

Prints (markdown, the figures of docs/benchmarks.md "## Eval metric catalogue"):
1. evaluate() over all items: wall and CPU seconds (best of the repetitions); the sum
   over 10 chunks of 100 items of each chunk's fastest wall time (the `timeit` way to
   see through a shared machine's bursts of contention); and the same run's floor, a
   metric that only reads the answer, once per catalogue metric per item (what any
   evaluate() must pay), with the catalogue's cost as a multiple of it;
2. a calibration of this machine's speed in the same run: the median latency of the
   guard's `check_observation` on 2 KB of realistic text (benchmarks/guard.py), against
   the 0.528 ms recorded for it in docs/benchmarks.md ("Guardrails", load average 3.6);
   the catalogue's CPU time scaled by that ratio estimates it on that quieter machine;
3. per-metric CPU cost in microseconds per item, slowest first, each cell timed inside
   an evaluation in catalogue order (the first metric that needs a shared view pays).

`--baseline ../main/src` first times another checkout's code against this one in the
same process (a renamed copy of it), chunk by chunk of 100 items, alternating which goes
first: a ratio that a shared machine's changing load does not skew.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import importlib
import json
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from guard import realistic, timed
from tracerl.evals import evaluate
from tracerl.evals.catalogue import CATALOGUE, build
from tracerl.evals.items import EvalItem, item_from_record
from tracerl.evals.metric import Metric, score
from tracerl.guard import Guard

GUARD_2KB_P50_MS = 0.528  # docs/benchmarks.md, Guardrails: check_observation, 2 KB, load 3.57

WORDS = ("the agent searched the index and fetched the report which states that revenue "
         "grew in the third quarter while costs fell slightly across every region of the "
         "company so the forecast was raised for next year by the board").split()
TOOLS = [{"type": "function", "function": {"name": n, "parameters": {
    "type": "object", "required": ["q"] if n == "search" else ["id"],
    "properties": {"q": {"type": "string"}, "id": {"type": "string"}}}}}
    for n in ("search", "fetch")]
SCHEMA = {"type": "object", "required": ["answer", "confidence", "sources"],
          "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"},
                         "sources": {"type": "array", "items": {"type": "string"}}}}
OPTIONS = {
    "regex_match": {"pattern": r"\bgrew\b"},
    "json_schema": {"schema": SCHEMA},
    "tool_call_validity": {"schemas": TOOLS},
    "length": {"min_len": 20, "max_len": 80, "unit": "words"},
    "tool_selection": {"required": ("search",), "forbidden": ("delete",)},
}


def _call(i: int, name: str, args: dict | str) -> dict:
    raw = args if isinstance(args, str) else json.dumps(args)
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": raw}}


def make_record(rng: random.Random, i: int) -> dict:
    docs = [f"d{rng.randrange(40)}" for _ in range(8)]
    query = " ".join(rng.sample(WORDS, 4))
    msgs = [{"role": "user", "content": f"What does the report say about {query}?"}]
    calls = [_call(0, "search", {"q": query}), _call(1, "fetch", {"id": docs[0]})]
    if rng.random() < 0.1:
        calls.append(_call(2, "fetch", '{"id": d1'))  # malformed: the policy's fault
    for c in calls:
        msgs.append({"role": "assistant", "content": "", "tool_calls": [c]})
        ok = rng.random() > 0.15
        msgs.append({"role": "tool", "tool_call_id": c["id"],
                     "content": json.dumps(docs) if ok else "Error: upstream timeout"})
    prose = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 70)))
    payload = {"answer": prose[:40], "confidence": round(rng.random(), 2),
               "sources": docs[:2]}
    answer = (f"Revenue grew [{docs[0]}] and costs fell [{docs[1]}]. {prose}.\n"
              f"Items: alpha, beta, gamma\n{json.dumps(payload)}")
    if rng.random() < 0.3:
        answer += "\n```python\nimport json\nprint(json.dumps({'ok': 1}))\n```"
    msgs.append({"role": "assistant", "content": answer})
    return {
        "id": f"item-{i}", "task_id": f"task-{i % 50}", "tags": [rng.choice(("a", "b", "c"))],
        "messages": msgs,
        "answer": "revenue grew in the third quarter and costs fell " + " ".join(
            rng.sample(WORDS, 6)),
        "required_phrases": ["revenue", "costs"], "forbidden_phrases": ["as an AI"],
        "any_phrases": ["grew", "rose"], "prefix": "Revenue", "suffix": "}",
        "schema": SCHEMA, "expected_json": {**payload, "confidence": 0.5},
        "retrieved_ids": docs, "relevant_ids": {docs[0]: 2, docs[3]: 1, "d99": 1},
        "reference_messages": msgs[1:5], "max_steps": 3,
        "latency_s": 1.5, "usage": {"prompt_tokens": 300, "completion_tokens": 120},
    }


def edge_record(record: dict, i: int) -> dict:
    """A copy of a benchmark record bent into one of 12 edge cases (for the equivalence
    check of `--same-reports`): empty, unicode and broken answers, malformed and missing
    reference data, banned code, JSON of the wrong types, tool arguments against their
    schema, several changed JSON values, several references."""
    r = json.loads(json.dumps(record))
    r["id"] = f"edge-{i}"
    last = r["messages"][-1]
    k = i % 12
    if k == 0:
        last["content"] = ""
    elif k == 1:
        last["content"] = ("Ünïcödé — «straße» 東京 " + last["content"][::-1]
                           + " 🎉\u2028e\u0301x")
    elif k == 2:
        last["content"] = last["content"].replace("}", "", 1)
    elif k == 3:
        r["answer"], r["expected_json"], r["schema"] = "", "not json", {"type": 5}
    elif k == 4:
        r["answer"] = "Ünïcödé straße 東京 " + r["answer"]
        r["expected_json"] = {"a": [1, {"b": [True, None, 1.0]}], "c": "é"}
    elif k == 5:
        last["content"], r["answer"] = '[{"a": 1}, [2, 3], "x", "x"]', ["x", "y", "x"]
    elif k == 6:
        r["relevant_ids"], r["reference_messages"], r["max_steps"] = {}, "bad", 0
    elif k == 7:
        last["content"] = "```python\nimport os\nos.system('rm -rf /')\n```\n" + last["content"]
    elif k == 8:
        last["content"] += '\n{"answer": 5, "confidence": "high", "sources": "d1", "x": []}'
    elif k == 9:
        r["messages"][1]["tool_calls"][0]["function"]["arguments"] = '{"q": 5}'
        r["messages"][3]["tool_calls"][0]["function"]["arguments"] = '{}'
    elif k == 10:
        r["expected_json"] = {**r["expected_json"], "answer": "other", "sources": ["d1"]}
    else:
        r["answer"] = [r["answer"], "costs fell and revenue grew in the quarter"]
    return r


def same_reports(src: str, records: list[dict]) -> None:
    """Exits non-zero unless the baseline's evaluate() report and this code's are the
    same JSON, byte for byte, on `records` plus 12 kinds of edge records."""
    run, make_metrics, make_item = load_baseline(src)
    data = records + [edge_record(r, i) for i, r in enumerate(records[:240])]
    texts = []
    for evaluate_, metrics_, item_ in ((run, make_metrics, make_item),
                                       (evaluate, catalogue_metrics, item_from_record)):
        report = evaluate_(metrics_(), [item_(r, f"gen:{i}") for i, r in enumerate(data)])
        texts.append(json.dumps(report.to_dict(), sort_keys=True, default=repr))
    if texts[0] != texts[1]:
        old, new = (json.loads(t)["items"] for t in texts)
        diff = next(f"{a['id']}: {a} | {b}" for a, b in zip(old, new, strict=True) if a != b)
        raise SystemExit(f"reports differ ({len(data)} items), first: {diff:.600}")
    print(f"reports identical: {len(data)} items ({len(data) - len(records)} edge), "
          f"{len(texts[1])} bytes of JSON")


def catalogue_metrics() -> list[Metric]:
    return [build(e.name, **OPTIONS.get(e.name, {})) for e in CATALOGUE
            if e.kind in ("deterministic", "measurement")]


class ReadAnswer:
    """The floor: a metric that reads the answer and nothing else."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, item: EvalItem) -> float:
        return float(len(item.output_text()) > 0)


def best_of(reps: int, make_metrics, records: list[dict]) -> tuple[float, float]:  # noqa: ANN001
    """(wall s, CPU s of this process) of the fastest of `reps` evaluations, each of
    metrics built anew by `make_metrics()` on items built anew from `records` (both
    untimed), so that every run pays for the views of the answer that metrics share
    (tokens, parsed JSON...) and starts with empty metric memos, as a first evaluation
    of new data does. On a shared machine the CPU time is the closer estimate of an
    idle machine's wall time."""
    runs = []
    for _ in range(reps):
        metrics, items = make_metrics(), fresh(records)
        t0, c0 = time.perf_counter(), time.process_time()
        evaluate(metrics, items)
        runs.append((time.perf_counter() - t0, time.process_time() - c0))
    return min(runs)


def fresh(records: list[dict]) -> list[EvalItem]:
    return [item_from_record(r, f"gen:{i}") for i, r in enumerate(records)]


def per_metric(records: list[dict], reps: int) -> dict[str, float]:
    """CPU seconds per metric over all items, fastest of `reps`, each metric timed cell
    by cell inside one evaluation of fresh items by fresh metrics in catalogue order
    (the first metric to need a shared view of the answer pays for it)."""
    best: dict[str, float] = {}
    clock = time.process_time
    for _ in range(reps):
        metrics = catalogue_metrics()
        spent = dict.fromkeys((m.name for m in metrics), 0.0)
        for item in fresh(records):
            for m in metrics:
                c0 = clock()
                score(m, item)
                spent[m.name] += clock() - c0
        best = {n: min(t, best.get(n, t)) for n, t in spent.items()}
    return best


@functools.cache
def load_baseline(src: str) -> tuple:
    """(evaluate, catalogue metrics factory, item_from_record) of another checkout's
    `src` (say main's), imported beside this code as package `tracerl_baseline` (a copy
    whose imports are rewritten), so that both versions run in one process."""
    root = Path(tempfile.mkdtemp(prefix="evals-baseline-"))
    atexit.register(shutil.rmtree, root, True)
    shutil.copytree(Path(src) / "tracerl", root / "tracerl_baseline",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for py in (root / "tracerl_baseline").rglob("*.py"):
        text = py.read_text(encoding="utf-8")
        py.write_text(re.sub(r"\btracerl(?=\.|\s+import\b)", "tracerl_baseline", text),
                      encoding="utf-8")
    sys.path.insert(0, str(root))
    ev = importlib.import_module("tracerl_baseline.evals")
    cat = importlib.import_module("tracerl_baseline.evals.catalogue")
    items = importlib.import_module("tracerl_baseline.evals.items")

    def metrics() -> list:
        return [cat.build(e.name, **OPTIONS.get(e.name, {})) for e in cat.CATALOGUE
                if e.kind in ("deterministic", "measurement")]

    return ev.evaluate, metrics, items.item_from_record


def compare_with(src: str, records: list[dict], reps: int) -> None:
    """This code against the baseline in one process, chunk by chunk of 100 items,
    alternating which goes first; per chunk the fastest CPU time of `reps` first
    evaluations (fresh items, fresh metrics), summed over the chunks."""
    sides = {"baseline": load_baseline(src),
             "this code": (evaluate, catalogue_metrics, item_from_record)}
    chunks = [records[i: i + 100] for i in range(0, len(records), 100)]
    best = {k: [float("inf")] * len(chunks) for k in sides}
    for rep in range(reps):
        for c, chunk in enumerate(chunks):
            for k in sorted(sides, reverse=(rep + c) % 2 == 1):
                run, make_metrics, make_item = sides[k]
                metrics = make_metrics()
                items = [make_item(r, f"gen:{i}") for i, r in enumerate(chunk)]
                c0 = time.process_time()
                run(metrics, items)
                best[k][c] = min(best[k][c], time.process_time() - c0)
    old, new = sum(best["baseline"]), sum(best["this code"])
    print(f"\nbaseline {src}: {old:.3f} s CPU, this code {new:.3f} s CPU (sums of "
          f"per-chunk minima over {reps} alternating repetitions): ratio {new / old:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--baseline", metavar="SRC",
                        help="also time another checkout's src/ (e.g. ../main/src) against "
                             "this code in the same process, alternating chunk by chunk")
    parser.add_argument("--compare-only", action="store_true",
                        help="with --baseline: only the comparison")
    parser.add_argument("--same-reports", action="store_true",
                        help="with --baseline: first check that both give the same report, "
                             "byte for byte, on the items plus edge items")
    args = parser.parse_args()
    rng = random.Random(0)
    records = [make_record(rng, i) for i in range(args.items)]
    if args.baseline and args.same_reports:
        same_reports(args.baseline, records)
    if args.baseline:
        compare_with(args.baseline, records, args.reps + 2)
        if args.compare_only:
            return
    metrics = catalogue_metrics()
    report = evaluate(metrics, fresh(records))  # warm-up, and a check that nothing fails
    if report.failures:
        raise SystemExit(f"metrics failed: {report.failures[:3]}")
    wall, cpu = best_of(args.reps, catalogue_metrics, records)
    _, cpu_floor = best_of(args.reps, lambda: [ReadAnswer(m.name) for m in metrics], records)
    size = max(1, len(records) // 10)
    chunks = [records[i: i + size] for i in range(0, len(records), size)]
    chunked = sum(best_of(args.reps + 2, catalogue_metrics, c)[0] for c in chunks)
    print("| items | metrics | wall s | CPU s | sum of chunk minima s | floor CPU s | "
          "CPU / floor |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(records)} | {len(metrics)} | {wall:.3f} | {cpu:.3f} | {chunked:.3f} | "
          f"{cpu_floor:.3f} | {cpu / cpu_floor:.1f}x |")
    guard, text = Guard(), realistic(2048)
    p50, _ = timed(lambda: guard.check_observation(text), 1000)
    scale = GUARD_2KB_P50_MS / p50
    print(f"\ncalibration: guard check_observation 2 KB p50 {p50:.3f} ms here, "
          f"{GUARD_2KB_P50_MS} ms recorded: this run's CPU is {1 / scale:.2f}x slower; "
          f"catalogue CPU scaled to the recorded machine: {cpu * scale:.2f} s")
    print(f"target < 2 s for 1,000 items: CPU {cpu:.2f} s here "
          f"({'met' if cpu < 2 else 'NOT met'}), {cpu * scale:.2f} s calibrated "
          f"({'met' if cpu * scale < 2 else 'NOT met'}), wall {wall:.2f} s")
    spent = per_metric(records, args.reps)
    print("\n| metric | CPU us / item |")
    print("|---|---:|")
    for name, t in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {t / len(records) * 1e6:.1f} |")
    scored = sum(s.scored for s in report.aggregates.values())
    unjudged = sum(s.unjudged for s in report.aggregates.values())
    print(f"\n{scored} cells scored, {unjudged} unjudged, {len(report.failures)} failed")


if __name__ == "__main__":
    main()

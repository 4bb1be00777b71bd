"""Guardrail scanners: accuracy on the labelled corpus and latency on the rollout path.

    .venv/bin/python benchmarks/guard.py            # full run (about a minute)
    .venv/bin/python benchmarks/guard.py --quick    # fewer latency repetitions

Prints markdown tables (the figures in docs/benchmarks.md, "## Guardrails"):
1. precision / recall / FPR per scanner on the dev split (tuned on) and the held-out
   split (never tuned on), at the Guard's default threshold (score >= 0.5);
2. the secrets category against detect-secrets (its default plugins) in the same run,
   when detect-secrets is installed (skipped with a note otherwise);
3. p50 / p99 latency of the full pipeline (`Guard.check_observation`, all five
   scanners) on realistic text of 2 KB, 20 KB and 1 MB and on adversarial inputs of the
   same sizes, with the cost of `str.lower()` plus one literal search as a floor;
5. `--only real`: the jailbreak scanner on real text and public attacks by source, the
   ranking curve, and Future AGI's scanners on the same texts (benchmarks/guard_real.py);
4. `--only paraphrase`: recall and FPR of the jailbreak scanner on the paraphrase sets
   of issue 15 (guard_corpus/paraphrase_sets.py), with and without the learned override
   detector (its findings say "override detector"), on the held-out split too.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "guard_training"))

import guard_real
from guard_corpus import (
    CATEGORIES,
    TRAINING_SETS,
    CorpusItem,
    load_corpus,
    paraphrase_numbers,
    paraphrase_set,
)
from guard_corpus.score import any_fired, score
from real import FOLDS

from tracerl.guard import Guard, override_model, scan
from tracerl.guard.findings import lower_same_length
from tracerl.guard.normalize import canonical

THRESHOLD = 0.5


def row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


def table(header: tuple[str, ...]) -> None:
    row(*header)
    row(*("---" for _ in header))


def ratio(k: int, n: int) -> str:
    return f"{k / n:.3f} ({k}/{n})"


def accuracy_table(split: str, items: list[CorpusItem]) -> None:
    def detect(text: str) -> set[str]:
        return {f.scanner for f in scan(text, min_score=THRESHOLD)}

    res = score(items, detect, CATEGORIES)
    pos, neg = sum(i.positive for i in items), sum(not i.positive for i in items)
    print(f"\n### Accuracy, {split} split ({pos} positives, {neg} hard negatives)\n")
    header = ("scanner", "precision", "recall", "FPR on hard negatives", "TP", "FN", "FP",
              "fires on other positives")  # fmt: skip
    table(header)
    for c, s in res.items():
        row(c, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.fpr:.3f}", s.tp, s.fn, s.fp,
            s.cross_fires)  # fmt: skip
    fired, total = any_fired(items, detect)
    print(f"\nAny scanner fired on {fired} of {total} hard negatives ({fired / total:.1%}).")
    missed = [(c, i) for c, s in res.items() for i in s.missed]
    if missed:
        byid = {i.id: i for i in items}
        print("Missed: " + "; ".join(f"{c}: {byid[i].text[:70]!r}" for c, i in missed[:8]))


def _detect_secrets() -> Callable[[str], bool] | None:
    """detect-secrets' line-based scan as `detect-secrets scan` runs it on a file (entropy
    limits and filters on), minus the file I/O. Its `scan_line` is the eager ad-hoc mode
    that reports every string and is not a fair comparison."""
    try:
        from detect_secrets.core.scan import _process_line_based_plugins
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def found(text: str) -> bool:
        with default_settings():
            lines = list(enumerate(text.splitlines(), start=1))
            found = _process_line_based_plugins(lines, filename="observation.txt")
            return any(True for _ in found)

    return found


def secrets_comparison(items: list[CorpusItem]) -> None:
    print("\n### Secrets: tracerl vs detect-secrets (same items, same run)\n")
    ds = _detect_secrets()
    if ds is None:
        print("detect-secrets is not installed; comparison skipped (pip install detect-secrets).")
        return
    ours: Callable[[str], bool] = lambda t: any(  # noqa: E731
        f.score >= THRESHOLD for f in scan(t, ["secrets"])
    )
    pos = [i.text for i in items if i.positive and i.category == "secrets"]
    neg_s = [i.text for i in items if not i.positive and i.category == "secrets"]
    neg_all = [i.text for i in items if not i.positive]
    table(("detector", "recall (secrets positives)", "FPR (secrets hard negatives)",
           "FPR (all hard negatives)", "mean latency per item"))  # fmt: skip
    for name, fn in (("tracerl.guard secrets", ours), ("detect-secrets 1.x default plugins", ds)):
        t0 = time.perf_counter()
        hits = [fn(t) for t in pos]
        fp_s = [fn(t) for t in neg_s]
        fp_all = [fn(t) for t in neg_all]
        n = len(pos) + len(neg_s) + len(neg_all)
        us = (time.perf_counter() - t0) / n * 1e6
        row(name, ratio(sum(hits), len(pos)), ratio(sum(fp_s), len(neg_s)),
            ratio(sum(fp_all), len(neg_all)), f"{us:.0f} us")  # fmt: skip


_PARA = (
    "The build finished in 42.3 seconds. Running tests for module utils/io.py: 128 passed.\n"
    "def load(path):\n    with open(path) as f:\n        return json.load(f)\n"
    "See https://docs.python.org/3/library/json.html for details. Contact: dana@corp.example\n"
    "commit 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b, version 2.1.0, "
    "request 550e8400-e29b-41d4-a716-446655440000\n"
    '{"status": "ok", "rows": [{"id": 7, "name": "alpha", "score": 0.93}, '
    '{"id": 8, "name": "beta"}]}\n'
    "SELECT name, total FROM orders WHERE created_at > '2024-01-01' ORDER BY total DESC LIMIT 10;\n"
    "Résumé: naïve café — 東京 ✓\n"
)


def realistic(size: int) -> str:
    return (_PARA * (size // len(_PARA) + 1))[:size]


def copies(text: str, n: int = 4) -> Callable[[], str]:
    """A function returning `n` equal but distinct copies of `text` in turn. The scanners
    keep per-text work (the lower-cased text, its trigram table, its non-ASCII characters)
    for the last one or two text objects they saw, which serves the five scanners of one
    scan; timing the same object again and again would skip that work, which a rollout
    (a new text each time) never does."""
    pool = [text[:i] + text[i:] for i in range(1, n + 1)]
    assert len({id(t) for t in pool} | {id(text)}) == n + 1
    turn = itertools.cycle(pool)
    return lambda: next(turn)


ADVERSARIAL: dict[str, str] = {
    "a-run": "a",
    "digits and spaces": "1 ",
    "ignore repeated": "ignore all previous ",
    "rm flags repeated": "rm -r ",
    "@ repeated": "a@",
    "dots": "1.",
    "quote-or": "' or ",
    "traversal": "../",
    "separators": ";&&|",
    "base64-ish": "QUFB",
    "key= repeated": "key=",
    "template opener": "<|",
    "curl repeated": "curl ",
    "zero-width": "a\u200b",
    "homoglyph": "іgnоrе ",
    "leetspeak": "1gn0r3 ",
    "private key headers": "-----BEGIN PRIVATE KEY-----",
}


def timed(fn: Callable[[], object], reps: int) -> tuple[float, float]:
    """(p50, p99) in milliseconds over `reps` calls (p99 is the max when reps < 100)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return statistics.median(times), p99


def latency(quick: bool) -> None:
    guard = Guard()
    sizes = (("2 KB", 2048, 300 if quick else 3000), ("20 KB", 20_480, 40 if quick else 300),
             ("1 MB", 1_048_576, 2 if quick else 5))  # fmt: skip
    print("\n### Latency of the full pipeline (5 scanners)\n")
    print("p99 is the maximum when there are fewer than 100 repetitions.\n")
    table(("input", "size", "reps", "p50 ms", "p99 ms", "p99 us per KB"))
    for label, n, reps in sizes:
        text = realistic(n)
        fresh = copies(text)
        cases = (
            ("realistic, check_observation", lambda f=fresh: guard.check_observation(f())),
            ("realistic, check_tool_call",
             lambda f=fresh: guard.check_tool_call("bash", {"c": f()})),
            ("realistic, scan()", lambda f=fresh: scan(f())),
            ("override detector alone (in scan())",
             lambda v=_view(text): override_model.load().best(v)),  # noqa: B008
            ("floor: str.lower() + one find", lambda t=text: t.lower().find("ignore")),
        )
        for name, fn in cases:
            p50, p99 = timed(fn, reps)
            row(name, label, reps, f"{p50:.3f}", f"{p99:.3f}", f"{p99 * 1000 / (n / 1024):.1f}")
    for label, n, reps in sizes:
        results = []
        for name, unit in ADVERSARIAL.items():
            fresh = copies((unit * (n // len(unit) + 1))[:n])
            p50, p99 = timed(lambda f=fresh: guard.check_observation(f()), max(2, reps // 10))
            results.append((p50, p99, name))
        results.sort()  # by p50: p99 of few repetitions on a shared machine is mostly noise
        p50, p99, name = results[-1]
        row(f"adversarial, slowest of {len(results)} ({name})", label, max(2, reps // 10),
            f"{p50:.3f}", f"{p99:.3f}", f"{p99 * 1000 / (n / 1024):.1f}")  # fmt: skip
        p50, p99, name = results[len(results) // 2]
        row(f"adversarial, median of {len(results)} ({name})", label, max(2, reps // 10),
            f"{p50:.3f}", f"{p99:.3f}", f"{p99 * 1000 / (n / 1024):.1f}")  # fmt: skip


def _view(text: str) -> str:
    return canonical(text, lower_same_length(text)).text


def _jailbreak(text: str, learned: bool) -> bool:
    return any(f.scanner == "jailbreak" and f.score >= THRESHOLD
               and (learned or f.detail != "override detector") for f in scan(text))


def paraphrase() -> None:
    """Jailbreak-scanner recall and FPR per paraphrase set, rules alone and with the
    learned detector; the held-out corpus split's jailbreak positives and all its hard
    negatives likewise."""
    held = load_corpus("heldout")
    numbered = [(n, paraphrase_set(n)) for n in paraphrase_numbers() if n not in TRAINING_SETS]
    sets: dict[str, list[tuple[str, bool]]] = {}
    for n, by_family in numbered:
        if len(by_family) > 1 and n != 4:
            sets.update({f"set {n}, {k}": v for k, v in by_family.items()})
        sets[f"set {n}, all"] = [x for v in by_family.values() for x in v]
    sets["heldout split"] = [(i.text, True) for i in held if i.positive
                             and i.category == "jailbreak"] + [
        (i.text, False) for i in held if not i.positive]
    print("\n### Instruction overrides: paraphrase sets (issue 15)\n")
    table(("set", "positives", "negatives", "recall, rules", "recall, rules + detector",
           "FPR, rules", "FPR, rules + detector"))
    for name, items in sets.items():
        pos = [t for t, y in items if y]
        neg = [t for t, y in items if not y]
        cells = []
        for texts in (pos, neg):
            for learned in (False, True):
                k = sum(_jailbreak(t, learned) for t in texts)
                cells.append(ratio(k, len(texts)) if texts else "-")
        row(name, len(pos), len(neg), cells[0], cells[1], cells[2], cells[3])
        missed = [t for t in pos if not _jailbreak(t, True)]
        wrong = [t for t in neg if _jailbreak(t, True)]
        for t in missed:
            print(f"  missed: {t[:90]!r}")
        for t in wrong:
            print(f"  false alarm: {t[:90]!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer latency repetitions")
    parser.add_argument("--only", choices=("accuracy", "secrets", "latency", "paraphrase",
                                           "real"), help="one part")
    parser.add_argument("--split", choices=("heldout", "train", "all"), default="heldout",
                        help="which part of the real-text and public-attack sources to score")
    parser.add_argument("--cross", nargs="+", default=[], metavar="FOLD=WEIGHTS",
                        help="with --only real: score each fold's fit (train_mil --folds "
                             "FOLD) on the held-out sources it did not see, beside the "
                             "weights in use")
    parser.add_argument("--weights", type=Path, default=None,
                        help="score with this weights file instead of the shipped one")
    parser.add_argument("--fi", metavar="PYTHON", default=None,
                        help="a python with ai-evaluation installed: run Future AGI's "
                             "scanners on the same real texts (benchmarks/guard_fi.py)")
    args = parser.parse_args(argv)
    fits = {}
    for spec in args.cross:
        fold, sep, path = spec.partition("=")
        if not sep or not Path(path).is_file():
            parser.error(f"--cross wants FOLD=WEIGHTS with an existing file, got {spec!r}")
        if fold not in FOLDS:
            parser.error(f"--cross: unknown fold {fold!r}; known: {sorted(FOLDS)}")
        recorded = override_model.trained_folds(path)
        if recorded and recorded != (fold,):  # files from before folds were recorded: ()
            parser.error(f"--cross: {path} was trained on folds {recorded}, not {fold!r}")
        fits[fold] = Path(path)
    if args.weights:
        override_model.use(args.weights)
    random.seed(0)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.2f}, "
          f"threshold score >= {THRESHOLD}")  # fmt: skip
    if args.only in (None, "accuracy"):
        for split in ("dev", "heldout"):
            accuracy_table(split, load_corpus(split))
    if args.only in (None, "secrets"):
        secrets_comparison(load_corpus())
    if args.only in (None, "paraphrase"):
        paraphrase()
    if fits:
        guard_real.cross(fits)
    elif args.only in (None, "real"):
        guard_real.report(args.split, args.fi)
    if args.only in (None, "latency"):
        latency(args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

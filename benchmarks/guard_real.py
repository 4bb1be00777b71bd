"""The jailbreak scanner on real text and public attacks (issue 31), for benchmarks/guard.py.

    python benchmarks/guard.py --only real [--split heldout|train|all] [--fi VENV_PYTHON]
    python benchmarks/guard.py --only real --cross a=FOLD_A.npz b=FOLD_B.npz

Data: guard_training/real (docs/guard.md lists every source, its licence and split).
Per attack source: recall of the jailbreak scanner as `scan()` decides (any jailbreak
finding at score >= 0.5, rules and detector), and at each text source's Guard threshold;
per real-text source: false alarms likewise; every rate with its exact (Clopper-Pearson)
95% interval. Then the ranking curve over all the split's real text and attacks (recall
at 0.5%, 1% and 2% false alarms), and, with `--fi`, Future AGI's scanners (ai-evaluation,
in a venv of its own) on the same texts in the same run.

`--cross`: each weights file was fitted with `train_mil --real --folds F` (it trained on
fold F's cross-fit sources too, real.FOLDS) and is scored on the cross-fit sources of the
other folds, which it never saw (real.unseen), beside the weights in use on the same
texts (`--weights OLD.npz`: a detector that saw neither fold, the baseline; the shipped
file trained on both folds' fifths, which the header then says): what training on more
sources of other kinds buys on sources of yet other kinds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "guard_training"))

from real import BY_NAME, RealItem, fold_sources, load_all, unseen
from real.stats import rate, recall_at_fpr

from tracerl.guard import override_model, scan
from tracerl.guard.findings import lower_same_length
from tracerl.guard.normalize import canonical

THRESHOLD = 0.5
RULES_FIRED = 2.0
"""The ranking score of a text the jailbreak rules fire on (above any probability)."""


@dataclass(frozen=True)
class Scored:
    item: RealItem
    fired: bool
    """Any jailbreak finding at score >= THRESHOLD (as `scan()` reports it)."""
    rank: float
    """RULES_FIRED where the rules fire, else the detector's best span probability."""
    best: float
    """The highest jailbreak finding score (0 if none)."""
    code: bool
    """Any code_injection finding at score >= THRESHOLD."""
    prompt: bool
    """Flagged as a user message would be (Guard.check_prompt: jailbreak findings at the
    detector's prompt threshold or more)."""


def prompt_threshold() -> float:
    """The detector's user-prompt threshold (a tree from before issue 31 has one
    threshold for everything: its scan() decision at 0.5)."""
    return getattr(override_model.load(), "prompt_p", THRESHOLD)


def score_items(items: list[RealItem]) -> list[Scored]:
    model = override_model.load()
    prompt_min = prompt_threshold()
    out = []
    for i in items:
        found = scan(i.text, ["jailbreak"])
        rules = any(f.score >= THRESHOLD and f.detail != "override detector" for f in found)
        view = canonical(i.text, lower_same_length(i.text)).text
        p = model.best(view)[0]
        best = max((f.score for f in found), default=0.0)
        code = any(f.score >= THRESHOLD for f in scan(i.text, ["code_injection"]))
        out.append(Scored(i, best >= THRESHOLD, RULES_FIRED if rules else p, best, code,
                          best >= prompt_min))
    return out


def _row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


def report(split: str, fi_python: str | None = None) -> None:
    trained = fold_sources(override_model.trained_folds())
    unseen_source = {s.name: s.held_out and s.name not in trained for s in BY_NAME.values()}
    by_source = load_all(None if split == "all" else split, trained)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    scored = {s: score_items(items) for s, items in by_source.items() if items}
    elapsed = time.perf_counter() - t0
    n = sum(len(v) for v in scored.values())
    print(f"\n### Real text and public attacks ({split} split; {n} texts scored in "
          f"{elapsed:.0f} s)\n")
    fi = _future_agi(fi_python, scored) if fi_python else None
    head = ["source", "kind", "held-out source", "texts",
            "jailbreak scanner (scan(), score >= 0.5: documents, tool output)",
            f"jailbreak, as a user message (score >= {prompt_threshold()})", "code_injection"]
    if fi:
        head += ["Future AGI JailbreakScanner", "Future AGI CodeInjectionScanner"]
    _row(*head)
    _row(*("---" for _ in head))
    for source, rows in scored.items():
        s = BY_NAME[source]
        k = sum(r.fired for r in rows)
        cells = [source, "attacks: recall" if s.attack else "real text: false alarms",
                 "yes" if unseen_source[source] else "no (a fifth held out)", len(rows),
                 rate(k, len(rows)),
                 rate(sum(r.prompt for r in rows), len(rows)),
                 rate(sum(r.code for r in rows), len(rows))]
        if fi:
            for name in ("jailbreak", "code_injection"):
                flags = fi[name][source]
                cells.append(rate(sum(flags), len(flags)))
        _row(*cells)
    pos = [r.rank for v in scored.values() for r in v if r.item.attack]
    neg = [r.rank for v in scored.values() for r in v if not r.item.attack]
    if pos and neg:
        print(f"\nRanking over all {len(pos)} attacks and {len(neg)} real texts of the split "
              "(rules first, then the detector's probability):\n")
        _row("false alarms allowed", "recall", "threshold")
        _row("---", "---", "---")
        for fpr in (0.005, 0.01, 0.02):
            r, thr = recall_at_fpr(pos, neg, fpr)
            _row(f"{fpr:.1%}", f"{r:.3f}", f"{thr:.3f}")
        k_pos = sum(r.fired for v in scored.values() for r in v if r.item.attack)
        k_neg = sum(r.fired for v in scored.values() for r in v if not r.item.attack)
        print(f"\nAs scan() decides: recall {rate(k_pos, len(pos))}, false alarms "
              f"{rate(k_neg, len(neg))}.")
        for label, held in (("held-out sources", True), ("held-out fifth of trained sources",
                                                           False)):
            rows = [r for s, v in scored.items() if unseen_source[s] == held for r in v]
            for kind, attack in (("recall", True), ("false alarms", False)):
                mine = [r for r in rows if r.item.attack == attack]
                print(f"{label}, {kind}: documents {rate(sum(r.fired for r in mine), len(mine))}"
                      f"; user messages {rate(sum(r.prompt for r in mine), len(mine))}")
    missed = [r.item for v in scored.values() for r in v if r.item.attack and not r.fired]
    wrong = sorted((r for v in scored.values() for r in v if not r.item.attack and r.fired),
                   key=lambda r: -r.best)
    for i in missed[:12]:
        print(f"  missed ({i.source}): {i.text[:100]!r}")
    for r in wrong[:12]:
        print(f"  false alarm ({r.item.source}, {r.best:.2f}): {r.item.text[:100]!r}")


def _future_agi(python: str, scored: dict[str, list[Scored]]
                ) -> dict[str, dict[str, list[bool]]] | None:
    """Future AGI's local scanners on the same texts, in their own venv (benchmarks/
    guard_fi.py runs there); None with a note when it fails."""
    texts = {s: [r.item.text for r in rows] for s, rows in scored.items()}
    script = Path(__file__).with_name("guard_fi.py")
    t0 = time.perf_counter()
    try:
        out = subprocess.run([python, str(script)], input=json.dumps(texts), text=True,
                             capture_output=True, check=True, timeout=3600).stdout
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"Future AGI scanners skipped: {exc}")
        return None
    result = json.loads(out.strip().splitlines()[-1])
    print(f"Future AGI scanners ({', '.join(result['scanners'])}) took "
          f"{time.perf_counter() - t0:.0f} s.")
    return result


def _rates(rows: list[Scored]) -> tuple[str, str]:
    return (rate(sum(r.fired for r in rows), len(rows)),
            rate(sum(r.prompt for r in rows), len(rows)))


def cross(fits: dict[str, Path]) -> None:
    """Each fold's fit on the held-out sources it did not see, beside the weights in use
    on the same texts (module docstring)."""
    by_fit: dict[str, list[Scored]] = {}
    by_base: dict[str, list[Scored]] = {}
    scored_by: dict[str, str] = {}
    t0 = time.perf_counter()
    baseline = override_model.in_use()
    for fold, path in fits.items():
        sources = unseen(fold_sources([fold]))
        override_model.use(path)
        for name, items in sources.items():
            by_fit[name] = score_items(items)
            scored_by[name] = fold
        override_model.use(baseline)
        for name, items in sources.items():
            by_base[name] = score_items(items)
    base = "weights in use"
    if override_model.trained_folds():  # it saw a fifth of these sources: not a baseline
        base += f" (trained on folds {', '.join(override_model.trained_folds())})"
    n = sum(len(v) for v in by_fit.values())
    print(f"\n### Cross-fits: each held-out source scored by the fit that never saw it "
          f"({n} texts, twice, in {time.perf_counter() - t0:.0f} s)\n")
    head = ("source", "kind", "texts", "fit trained on fold", "fit: documents",
            "fit: user messages", f"{base}: documents", f"{base}: user messages")
    _row(*head)
    _row(*("---" for _ in head))
    for name, rows in by_fit.items():
        kind = "attacks: recall" if BY_NAME[name].attack else "real text: false alarms"
        _row(name, kind, len(rows), scored_by[name], *_rates(rows), *_rates(by_base[name]))
    print()
    for label, scored in (("cross-fits", by_fit), (base, by_base)):
        for kind, attack in (("recall", True), ("false alarms", False)):
            rows = [r for v in scored.values() for r in v if r.item.attack == attack]
            docs, users = _rates(rows)
            print(f"{label}, {kind}: documents {docs}; user messages {users}")
        pos = [r.rank for v in scored.values() for r in v if r.item.attack]
        neg = [r.rank for v in scored.values() for r in v if not r.item.attack]
        curve = [recall_at_fpr(pos, neg, f)[0] for f in (0.005, 0.01, 0.02)]
        print(f"{label}, recall at 0.5% / 1% / 2% false alarms: "
              + " / ".join(f"{c:.3f}" for c in curve))
    missed = [r.item for v in by_fit.values() for r in v if r.item.attack and not r.fired]
    for i in missed[:12]:
        print(f"  missed by the cross-fit ({i.source}): {i.text[:100]!r}")

"""Score override detectors on the set written after them, side by side (issue 15).

From guard_training/: `python -m guard_model.final OLD.npz [OLDER.npz ...] [--new NEW.npz]`
(NEW defaults to the shipped src/tracerl/guard/override_model.npz). Each detector is the
jailbreak scanner's rules plus a weights file at the scanner's threshold
(CLASSIFIER_MIN_P), exactly as `scan()` decides; the rules fire the same for all.
Sets: the newest paraphrase sets, 25 to 28 (blind: each by its own writer, committed
before any detector was scored on them), by family, each in all and all together, with
each detector's recall at fixed false-positive rates on them (how well it ranks, whatever
its threshold); the corpus's held-out split; and the development data (sets 1-11, 15-24
and the dev split: training data of the detectors trained with `train_mil --sets`).
A weights file of an older version is made with
`git show 438cd2f:src/tracerl/guard/override_model.npz > /tmp/old.npz`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from guard_corpus import load_corpus, paraphrase_set
from guard_corpus.score import print_recall_table

from guard_model.devdata import dev_sets, flat, recall_at_fpr, split, with_rules
from guard_model.train_mil import logit_of
from tracerl.guard import override_model
from tracerl.guard.jailbreak import CLASSIFIER_MIN_P

FPRS = (0.02, 0.04, 0.06)
BLIND = (25, 26, 27, 28)
"""The newest paraphrase sets, written after the shipped detector and not yet scored."""


def ranked(weights: Path):
    """text -> rules + the detector of `weights` as one score (devdata.with_rules)."""
    return with_rules(logit_of(override_model.load(weights)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, nargs="+")
    parser.add_argument("--new", type=Path, default=override_model.WEIGHTS_PATH)
    args = parser.parse_args()
    np.seterr(over="ignore")
    scores = {f"rules + {path.name}": ranked(path) for path in args.old}
    scores["rules + new detector"] = ranked(args.new)
    z_min = float(np.log(CLASSIFIER_MIN_P / (1 - CLASSIFIER_MIN_P)))
    blind = {f"set {n}": paraphrase_set(n) for n in BLIND}
    sets = {f"{name} (blind), {k}": v for name, fams in blind.items() for k, v in fams.items()}
    sets.update({f"{name} (blind), all": flat(fams) for name, fams in blind.items()})
    both = [x for fams in blind.values() for x in flat(fams)]
    sets["sets 25-28 (blind), all"] = both
    sets["held-out split"] = split(load_corpus("heldout"))
    sets["development data (sets 1-11, 15-24, dev split)"] = flat(dev_sets(later=True))
    deciders = {k: (lambda t, s=s: s(t) >= z_min) for k, s in scores.items()}
    # the new detector at its user-prompt threshold too (what Guard.check_prompt decides)
    prompt_p = override_model.load(args.new).prompt_p
    z_prompt = float(np.log(prompt_p / (1 - prompt_p)))
    if z_prompt < z_min:
        new = scores["rules + new detector"]
        deciders[f"rules + new detector, prompt threshold p {prompt_p}"] = (
            lambda t: new(t) >= z_prompt)
    print_recall_table(sets, deciders)
    for name, items in [*((n, flat(f)) for n, f in blind.items()), ("sets 25-28", both)]:
        print(f"\n| {name} (blind), all | "
              + " | ".join(f"recall at {f:.0%} FPR" for f in FPRS)
              + " |\n|---|" + "---:|" * len(FPRS))
        for label, score in scores.items():
            at = [recall_at_fpr(score, items, f)[0] for f in FPRS]
            print(f"| {label} | " + " | ".join(f"{r:.3f}" for r in at) + " |")


if __name__ == "__main__":
    main()

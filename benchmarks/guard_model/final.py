"""Score override detectors on the sets written after them, side by side (issue 15).

From benchmarks/: `python -m guard_model.final OLD.npz [NEW.npz]` (NEW defaults to the
shipped src/tracerl/guard/override_model.npz). Each detector is the jailbreak scanner's
rules plus the weights file at the scanner's threshold (CLASSIFIER_MIN_P), exactly as
`scan()` decides; the rules fire the same for both. Sets: the newest paraphrase set,
9 (blind, by family and in all), sets 8 and 7, the corpus's held-out split, and the
development data for reference.
A weights file of the old version is made with
`git show 33e4f08:src/tracerl/guard/override_model.npz > /tmp/old.npz`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from guard_corpus import load_corpus
from guard_corpus.paraphrase_set7 import SETS_7
from guard_corpus.paraphrase_set8 import SETS_8
from guard_corpus.paraphrase_set9 import SETS_9
from guard_corpus.score import print_recall_table

from guard_model.devdata import dev_sets, flat, rules, split, view
from tracerl.guard import override_model
from tracerl.guard.jailbreak import CLASSIFIER_MIN_P


def fires(weights: Path):
    """text -> whether rules + the detector of `weights` report an override."""
    model = override_model.load(weights)

    def fired(text: str) -> bool:
        return rules(text) or model.best(view(text))[0] >= CLASSIFIER_MIN_P
    return fired


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=override_model.WEIGHTS_PATH)
    args = parser.parse_args()
    sets = {f"set 9 (blind), {k}": v for k, v in SETS_9.items()}
    sets["set 9 (blind), all"] = flat(SETS_9)
    sets["set 8 (blind for the second round's detector only)"] = flat(SETS_8)
    sets["set 7 (blind for the first detector of 2026-12-02 only)"] = flat(SETS_7)
    sets["held-out split"] = split(load_corpus("heldout"))
    sets["development data (sets 1-8, dev split)"] = flat(dev_sets(later=True))
    np.seterr(over="ignore")
    print_recall_table(sets, {"rules + old detector": fires(args.old),
                              "rules + new detector": fires(args.new)})


if __name__ == "__main__":
    main()

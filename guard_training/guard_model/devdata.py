"""What the override-detector experiments share: the scanner's view of a text, the
development data a choice may use, and recall at a fixed false-positive rate.

Development data are every labelled set that has already been scored (paraphrase sets
1-11 and 15-24 of guard_training/guard_corpus and the corpus's dev split). A set written
after a model is trained is scored once, by the experiment's final step, and joins these
only after.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from guard_corpus import TRAINING_SETS, CorpusItem, load_corpus, paraphrase_set

from tracerl.guard import override_model, scan
from tracerl.guard.findings import lower_same_length
from tracerl.guard.normalize import canonical

SCORED = (3, 4, 5, 6, 7, 8, 9, 10, 11, *range(15, 25))
"""The paraphrase sets beyond 1 and 2 already scored (each once, blind, when written)."""

DEV_FPR = 0.02
"""The false-positive rate the detectors are compared and calibrated at (issue 15)."""

Labelled = list[tuple[str, bool]]
"""(text, is an instruction override)."""


def view(text: str) -> str:
    """What the scanner scores: the canonical lower-case view (homoglyphs folded)."""
    return canonical(text, lower_same_length(text)).text


def split(items: list[CorpusItem]) -> Labelled:
    """A corpus split as override data: its jailbreak positives and all its negatives."""
    return [(i.text, True) for i in items if i.positive and i.category == "jailbreak"] + [
        (i.text, False) for i in items if not i.positive]


def flat(sets: dict[str, Labelled]) -> Labelled:
    return [x for v in sets.values() for x in v]


def dev_sets(later: bool = False) -> dict[str, Labelled]:
    """Sets 1+2 and the dev split; with `later`, also sets 3-11 and 15-24 (scored once each when
    they were written, development data since)."""
    out = {"sets 1+2": flat(paraphrase_set(1)) + flat(paraphrase_set(2)),
           "dev split": split(load_corpus("dev"))}
    if later:
        out.update({f"set {n}": flat(paraphrase_set(n)) for n in SCORED})
    return out


def training_sets() -> dict[str, Labelled]:
    """Sets 12-14: written like the paraphrase sets, each by a writer who read nothing of
    the project, for training only (`train_mil --sets`; never scored as evaluation sets)."""
    return {f"set {n}": flat(paraphrase_set(n)) for n in TRAINING_SETS}


def shipped_logit(text: str) -> float:
    """The shipped detector's logit for the best span of `text`."""
    p = override_model.load().best(view(text))[0]
    return float(np.log(max(p, 1e-12) / max(1 - p, 1e-12)))


def rules(text: str) -> bool:
    """Whether the jailbreak scanner's rules (without the learned detector) fire."""
    return any(f.scanner == "jailbreak" and f.score >= 0.5 and f.detail != "override detector"
               for f in scan(text, ["jailbreak"]))


RULES_FIRED = 50.0
"""The score `with_rules` gives a text the keyword rules fire on (above any logit)."""


def with_rules(logit: Callable[[str], float]) -> Callable[[str], float]:
    """One score for rules + detector, as `scan()` decides: RULES_FIRED where the rules
    fire, else the detector's logit (so a threshold on it ranks both together)."""
    def score(text: str) -> float:
        return RULES_FIRED if rules(text) else logit(text)
    return score


def recall_at_fpr(score: Callable[[str], float], items: Labelled,
                  fpr: float = DEV_FPR) -> tuple[float, float]:
    """(recall, threshold) at the score that fires on at most `fpr` of the negatives."""
    neg = np.sort([score(t) for t, y in items if not y])
    thr = neg[min(len(neg) - 1, int(np.ceil(len(neg) * (1 - fpr))))] if len(neg) else -np.inf
    pos = np.array([score(t) for t, y in items if y])
    return float((pos > thr).mean()), float(thr)


def junk(n: int = 400, seed: int = 0) -> Labelled:
    """Benign text with little language in it, as tool output is full of: random letter
    groups, identifiers, paths, shell commands, numbers and place names in other scripts
    (a detector whose default leans to "attack" fires on these)."""
    import random
    import string

    rng = random.Random(seed)
    commands = ("rsync -av {a}/ {b}/", "ls -la /{a}/{b}", "git checkout -b {a}-{b}",
                "tar -xzf {a}.tar.gz -C /opt/{b}", "kubectl get pods -n {a}",
                "curl -s https://{a}.example.org/{b}.json", "cp -r {a} {b}.bak",
                "docker run --rm -v $PWD:/{a} {b}:latest", "pip install {a}=={n}.{m}")
    places = ("Zürich", "São Paulo", "Kraków", "Москва", "東京", "서울", "القاهرة", "मुंबई",
              "Reykjavík", "Łódź", "İstanbul", "Hà Nội", "Αθήνα", "תל אביב", "Bogotá")

    def word(k: int) -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(k))

    out: Labelled = []
    for i in range(n):
        kind = i % 5
        if kind == 0:
            text = " ".join(word(rng.randint(2, 7)) for _ in range(rng.randint(3, 8)))
        elif kind == 1:
            text = rng.choice(commands).format(a=word(5), b=word(4), n=rng.randint(0, 9),
                                               m=rng.randint(0, 30))
        elif kind == 2:
            text = ", ".join(rng.sample(places, rng.randint(3, 5)))
        elif kind == 3:
            text = "-".join(f"{rng.getrandbits(32):08x}" for _ in range(rng.randint(1, 4)))
        else:
            text = ",".join(str(rng.randint(0, 10**rng.randint(1, 6))) for _ in range(8))
        out.append((text, False))
    return out

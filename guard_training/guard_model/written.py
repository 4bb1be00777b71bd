"""Hand-written training data for the override detector (issue 15).

The *.jsonl files of written/, each line one JSON object {"text", "attack", "lang",
"kind"}. First round (four files): attacks in English and in 35 other languages, hard
negatives in English and in the same languages. Second round (three files, written
after paraphrase set 7 was scored, on the gaps it showed): attacks in the 17 languages
it missed most, hard negatives in 31 languages, and English attacks in unusual carriers
with the benign twins of its false alarms. Third round (three files, after set 8 was
scored): attacks in Chinese, Japanese, Korean and 21 smaller languages, romanized and
code-switched; English personas, terse overrides and orders in rare carriers; hard
negatives (session roles and styles asked by users, people's own system prompts,
admin notices, quotes, replaced policies) in English and 23 languages. Fourth round (four
files, after set 9 was scored): benign twins of its false alarms (users asking for roles
and styles, notices and procedures with override wording, config override files, writing
about prompts, support tickets) in English and in 32 languages with their attack twins;
attacks in Chinese, Japanese and Korean, fake headers of unusual authorities and orders
in transcripts, footnotes and contracts; long tool-result documents (e-mail threads,
search JSON, pages, logs) with an order to the AI or a benign twin inside. Fifth round
(three files, after set 10 was scored): writing about prompt injection, jailbreaks and
system prompts (articles, post-mortems, warnings that quote an attack, complaints about
assistants) in English and 30 languages; users asking for roles, games, styles or no
disclaimers, notes to colleagues and developer-mode steps in 26 languages; overrides in
16 languages in native script, orders after an addressee in reviews and JSON fields,
claims that the system message was retracted; each with its twins. Sixth round (two
files, after set 11 was scored): people telling people to ignore someone (parents,
teachers, judges to juries), threat models describing what an attacker could make an
agent do, chat message formats shown as data, task requests quoting text to process and
operators' own rules, in English and in 44 other languages, with attack twins (orders
inside the quoted text, wiki edits addressed to "any AI answering from this article").
Seventh round (two files, after set 15 was scored): attacks in 35 smaller and mid-size
languages (prompt leaks, dropped roles, orders in contract articles, minutes, CVs and
recipe comments) with their twins; tool error messages, staff AI-use policies,
superseding clauses and tickets about assistants, with attack twins in the same carriers.
Each line was written one at a time by one of twenty-one writers who were given the label
rules and the families to cover but did not see the evaluation sets, the training
grammars or the detector (the template-generated data of generate.py was the old detector's ceiling:
it learned the templates). Never scored by a scanner while written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

WRITTEN_DIR = Path(__file__).with_name("written")


@dataclass(frozen=True)
class Written:
    """One hand-written training text."""

    text: str
    attack: bool
    lang: str
    kind: str
    source: str
    """The file's stem (attacks_en, negatives_ml, ...)."""


def load_written(folder: Path = WRITTEN_DIR) -> list[Written]:
    """Every line of every *.jsonl in `folder`; a bad line is refused with its place."""
    out: list[Written] = []
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise FileNotFoundError(f"no *.jsonl training files in {folder}")
    for path in files:
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                    item = Written(obj["text"], obj["attack"], obj.get("lang", "?"),
                                   obj.get("kind", "?"), path.stem)
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"{path}:{n}: bad training line: {exc!r}") from None
                if not isinstance(item.text, str) or not item.text.strip() \
                        or not isinstance(item.attack, bool):
                    raise ValueError(f"{path}:{n}: 'text' must be a non-empty string and "
                                     f"'attack' true or false")
                out.append(item)
    return out

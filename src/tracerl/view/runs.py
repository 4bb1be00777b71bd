"""A run directory as the viewer reads it: its files, read again when they change.

Every read goes back to the files, so a run that is still training shows its new steps
and trajectories on the next page load. metrics.jsonl is appended to one line per write;
a line still being written (no newline yet) is left for the next read, and a complete
line that is not JSON is skipped and counted, never a crash of the page. The trace
store is opened once, when it exists (a run writes it with its first rollout); SQLite's
WAL mode lets it be read while training writes it. The app's handlers run one at a
time (on the event loop), not always on the same thread, hence `check_same_thread=False`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tracerl.trace.store import STORE_FILENAME, TraceStore

CONFIG, METRICS, SUMMARY = "config.yaml", "metrics.jsonl", "summary.json"


@dataclass(frozen=True)
class Records:
    """The complete records of metrics.jsonl, and how many complete lines were not JSON."""

    records: tuple[dict[str, Any], ...]
    skipped: int


def read_records(path: Path) -> Records:
    """Records of a JSONL file another process may be appending to (see module docstring)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Records((), 0)
    complete = data[: data.rfind(b"\n") + 1].decode("utf-8", errors="replace")
    out, skipped = [], 0
    for line in complete.splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            skipped += 1
            continue
        if isinstance(record, dict):
            out.append(record)
        else:
            skipped += 1
    return Records(tuple(out), skipped)


def check_run_dir(path: str | Path) -> Path:
    """`path` as a run directory, or a ValueError saying what is missing."""
    p = Path(path)
    if not p.is_dir():
        raise ValueError(f"{p}: not a directory (give a run directory such as runs/calc-tiny)")
    if not any((p / name).exists() for name in (CONFIG, METRICS, STORE_FILENAME)):
        raise ValueError(f"{p}: not a run directory (no {CONFIG}, {METRICS} or "
                         f"{STORE_FILENAME} in it)")
    return p


class RunFiles:
    """One run directory (read-only); `index` is its position on the command line."""

    def __init__(self, path: str | Path, index: int = 0) -> None:
        self.path = check_run_dir(path)
        self.index = index
        self._store: TraceStore | None = None
        self._config: tuple[tuple[int, int], dict[str, Any]] | None = None

    @property
    def name(self) -> str:
        """The run's configured name (config.yaml), else the directory's name."""
        config = self.config()
        name = config.get("name") if isinstance(config, dict) else None
        return str(name) if name else self.path.name

    def config_text(self) -> str:
        try:
            return (self.path / CONFIG).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def config(self) -> dict[str, Any]:
        """config.yaml, parsed again only when the file changes (pages ask for the run's
        name many times, and YAML parsing is slow)."""
        try:
            st = (self.path / CONFIG).stat()
        except FileNotFoundError:
            return {}
        key = (st.st_mtime_ns, st.st_size)
        if self._config is None or self._config[0] != key:
            try:
                loaded = yaml.safe_load(self.config_text())
            except yaml.YAMLError:
                loaded = None
            self._config = (key, loaded if isinstance(loaded, dict) else {})
        return self._config[1]

    def summary(self) -> dict[str, Any] | None:
        """summary.json, written when the run finishes (None before, or when unreadable)."""
        try:
            loaded = json.loads((self.path / SUMMARY).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        return loaded if isinstance(loaded, dict) else None

    def records(self) -> Records:
        return read_records(self.path / METRICS)

    def store(self) -> TraceStore | None:
        """The trace store, opened on first use once it exists."""
        if self._store is None and (self.path / STORE_FILENAME).exists():
            self._store = TraceStore(self.path, check_same_thread=False)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


"""Reading JSONL files (plain or gzipped) with errors that say where (file:line)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_lines(path: str | Path) -> Iterator[tuple[str, Any]]:
    """(where, record) for each non-blank line of a JSONL file (`.gz`: gzipped);
    where = "path:line"."""
    path = Path(path)
    opened = (gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz"
              else path.open(encoding="utf-8"))
    with opened as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not JSON: {exc.msg}") from exc

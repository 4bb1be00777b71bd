"""Reading JSONL files with errors that say where (file:line)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def json_lines(path: str | Path) -> Iterator[tuple[str, Any]]:
    """(where, record) for each non-blank line of a JSONL file; where = "path:line"."""
    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not JSON: {exc.msg}") from exc

"""A persistent response cache (SQLite): the same request to the same model with the
same sampling settings is answered once.

The key hashes the model's identity, the request (a token-id context or chat messages),
the sampling settings and a replica number (the r-th identical request of one batch:
a group of G samples from one context is G different entries). So scoring a candidate
again, or resuming an interrupted search, costs nothing, and the reply is the same one
the first time saw. One connection per cache; writes are committed at once (a crash
loses no paid-for reply).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any


def cache_key(model: str, request: Any, settings: Any, replica: int = 0) -> str:
    blob = json.dumps([model, request, settings, replica], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    """`get(key)` / `put(key, value)` of JSON values in a SQLite file (or in memory)."""

    def __init__(self, path: str | Path | None = None) -> None:
        target = str(path) if path is not None else ":memory:"
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(target, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS responses "
                        "(key TEXT PRIMARY KEY, model TEXT, value TEXT)")
        self.db.commit()

    def get(self, key: str) -> Any | None:
        row = self.db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, model: str, value: Any) -> None:
        self.db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
                        (key, model, json.dumps(value)))
        self.db.commit()

    def __len__(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self.db.close()

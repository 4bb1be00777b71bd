"""The BFCL splits: train / held-out by a hash of the task id, and unseen_api.

- An entry is held out iff the first 8 bytes of SHA-256("bfcl:" + key), read as a
  fraction of 2**64, fall below `heldout_fraction` (default 0.2). The key is the id,
  except that the four multi-turn categories share their scenarios (multi_turn_base_7,
  multi_turn_miss_func_7, ... are the same conversation with a twist), so their key is
  `multi_turn_<n>`: one scenario is on one side in every category. The predicate is a
  pure function of the id: adding entries never moves another one.
- unseen_api: every multi-turn entry that involves one of `unseen_classes` (default
  TicketAPI: 124 of 800 multi-turn entries) is in this split and in no other, so no
  training task ever shows those API classes.
- Train never holds an entry that has no demonstrable answer: live_relevance (no
  accepted answer is shipped) and the few entries whose accepted answer fails BFCL's own
  rules (envs/bfcl/answers.py); those stay in held-out when hashed there.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from tracerl.envs.bfcl.data import BfclEntry

Side = Literal["train", "heldout", "unseen_api"]
SIDES: tuple[str, ...] = ("train", "heldout", "unseen_api")
HELDOUT_FRACTION = 0.2
UNSEEN_CLASSES = ("TicketAPI",)
_MULTI = re.compile(r"^multi_turn_[a-z_]+?_(\d+)$")


def split_key(entry_id: str) -> str:
    """What the hash reads: the id, or the shared scenario of a multi-turn id."""
    m = _MULTI.match(entry_id)
    return f"multi_turn_{m.group(1)}" if m else entry_id


def hashed_heldout(entry_id: str, fraction: float = HELDOUT_FRACTION) -> bool:
    digest = hashlib.sha256(f"bfcl:{split_key(entry_id)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def side(entry: BfclEntry, fraction: float = HELDOUT_FRACTION,
         unseen_classes: tuple[str, ...] = UNSEEN_CLASSES) -> Side:
    """Which split `entry` belongs to (before the train-side demonstrability filter)."""
    if entry.multi_turn and set(entry.involved_classes) & set(unseen_classes):
        return "unseen_api"
    return "heldout" if hashed_heldout(entry.id, fraction) else "train"

"""Token ids back to the text pieces the policy sampled, with the run's own tokenizer.

Traces keep token ids, not their text; the viewer shows each sampled token as its own
piece so that a colour (advantage, log-probability) sits on exactly the token it
belongs to. The tokenizer is the run's: the `tokenizer.json` saved beside its weights
(checkpoints, `init/`, `base-stage<i>/`) or in the model directory config.yaml names,
read with the `tokenizers` library alone (no transformers import, no model).

A piece is the text its token adds to the few tokens before it (decoded with and
without it), so byte-level tokens that split one character show the character on the
token that completes it (the others show nothing), and a tokenizer's leading-space
rules apply as in running text. Decoding a short window rather than the whole prefix
keeps a long turn linear.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer

TOKENIZER_FILE = "tokenizer.json"
_PARTIAL = "\ufffd"
WINDOW = 8
"""Tokens of context decoded before each token (a UTF-8 character spans at most 4)."""


def find_tokenizer(run_dir: Path, model: str = "") -> Path | None:
    """The run's tokenizer.json: its newest checkpoint's, else `init/`, `base-stage<i>/`,
    else the model directory config.yaml names; None when there is none."""
    candidates = sorted((run_dir / "checkpoints").glob(f"*/{TOKENIZER_FILE}"), reverse=True)
    candidates += [run_dir / "init" / TOKENIZER_FILE,
                   *sorted(run_dir.glob(f"base-stage*/{TOKENIZER_FILE}"))]
    if model:
        candidates.append(Path(model).expanduser() / TOKENIZER_FILE)
    return next((p for p in candidates if p.is_file()), None)


class TokenText:
    """Decodes ids to per-token pieces; without a tokenizer each piece is `[id]`."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._tok = Tokenizer.from_file(str(path)) if path is not None else None

    @property
    def available(self) -> bool:
        return self._tok is not None

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """One string per id: the text that id adds after the WINDOW ids before it."""
        if self._tok is None:
            return [f"[{i}]" for i in ids]
        ids = list(ids)
        starts = [max(0, k - WINDOW) for k in range(len(ids))]
        without = self._tok.decode_batch([ids[s:k] for k, s in enumerate(starts)],
                                         skip_special_tokens=False)
        with_it = self._tok.decode_batch([ids[s:k + 1] for k, s in enumerate(starts)],
                                         skip_special_tokens=False)
        singles = self._tok.decode_batch([[i] for i in ids], skip_special_tokens=False)
        out = []
        for before, after, single in zip(without, with_it, singles, strict=True):
            # an incomplete UTF-8 character decodes as U+FFFD until its last byte comes
            before, after = before.rstrip(_PARTIAL), after.rstrip(_PARTIAL)
            out.append(after[len(before):] if after.startswith(before) else single)
        return out

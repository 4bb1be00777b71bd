"""`scan` and `redact`: the stateless entry points over the built-in scanners.

`scan(text)` runs every scanner (or the ones named) and returns findings sorted by
offset. `redact(text)` replaces each finding's span with a typed placeholder such as
`[REDACTED:email]`, keeping every other character of the text as it was; invisible
characters are simply removed (the visible text between them stays), since a
placeholder would make them visible.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tracerl.guard.code_injection import CodeInjectionScanner
from tracerl.guard.findings import Finding, Scanner
from tracerl.guard.invisible import InvisibleScanner, strip_invisible
from tracerl.guard.jailbreak import JailbreakScanner
from tracerl.guard.pii import PIIScanner
from tracerl.guard.secrets import SecretsScanner

SCANNERS: dict[str, Scanner] = {
    s.name: s
    for s in (
        JailbreakScanner(),
        CodeInjectionScanner(),
        SecretsScanner(),
        PIIScanner(),
        InvisibleScanner(),
    )
}
"""The built-in scanners by name; each is stateless and safe to share across threads."""

ScannerSpec = str | Scanner


def resolve(scanners: Iterable[ScannerSpec] | None) -> list[Scanner]:
    """Scanner objects for names or instances; None means all built-in scanners."""
    if scanners is None:
        return list(SCANNERS.values())
    if isinstance(scanners, str):
        scanners = [scanners]
    out = []
    for s in scanners:
        if isinstance(s, str):
            if s not in SCANNERS:
                raise ValueError(f"unknown scanner {s!r}; known scanners: {sorted(SCANNERS)}")
            out.append(SCANNERS[s])
        elif isinstance(s, Scanner):
            out.append(s)
        else:
            raise TypeError(f"scanners must hold names or Scanner objects, got {type(s).__name__}")
    return out


def scan(
    text: str, scanners: Iterable[ScannerSpec] | None = None, *, min_score: float = 0.0
) -> list[Finding]:
    """All findings of the chosen scanners over `text`, sorted by (start, scanner)."""
    if not isinstance(text, str):
        raise TypeError(f"scan() needs str text, got {type(text).__name__}")
    out = [f for s in resolve(scanners) for f in s.scan(text) if f.score >= min_score]
    return sorted(out, key=lambda f: (f.start, f.scanner, f.end))


def placeholder(f: Finding, text: str) -> str:
    """What a finding's span becomes in redacted text: invisible characters are removed
    (the visible text between them stays), everything else becomes a typed tag."""
    if f.scanner == "invisible":
        return strip_invisible(text[f.start : f.end])
    return f"[REDACTED:{f.kind}]"


def apply_redactions(text: str, findings: Sequence[Finding]) -> str:
    """`text` with each finding's span replaced; overlapping spans are merged."""
    spans = sorted((f.start, f.end, f) for f in findings if f.end > f.start)
    parts: list[str] = []
    pos = 0
    for start, end, f in spans:
        if end <= pos:
            continue
        if start < pos:  # overlaps the previous span: extend it
            start = pos
        else:
            parts.append(text[pos:start])
            parts.append(placeholder(f, text))
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def redact(
    text: str, scanners: Iterable[ScannerSpec] | None = None, *, min_score: float = 0.5
) -> str:
    """`text` with every finding at or above `min_score` replaced by a placeholder."""
    return apply_redactions(text, scan(text, scanners, min_score=min_score))

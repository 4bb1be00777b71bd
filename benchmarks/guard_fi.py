"""Future AGI's local scanners on texts from standard input (issue 31); run with a python
that has ai-evaluation 1.1.0 installed (benchmarks/guard_real.py starts it):

    python -m venv /tmp/fi-venv && /tmp/fi-venv/bin/pip install ai-evaluation==1.1.0

Reads {source: [text, ...]} as JSON; prints one JSON line {"scanners": [...], "jailbreak":
{source: [flagged, ...]}, "code_injection": {...}}: a text is flagged when the scanner's
result did not pass, with its default settings (regex patterns, threshold 0.7, no ML
model: the ML option loads a model from a hub). Imports nothing from tracerl.
"""

from __future__ import annotations

import json
import sys

from fi.evals.guardrails.scanners import CodeInjectionScanner, JailbreakScanner


def main() -> int:
    texts: dict[str, list[str]] = json.load(sys.stdin)
    scanners = {"jailbreak": JailbreakScanner(), "code_injection": CodeInjectionScanner()}
    out: dict[str, object] = {"scanners": [type(s).__name__ for s in scanners.values()]}
    for name, scanner in scanners.items():
        out[name] = {src: [not scanner.scan(t).passed for t in items]
                     for src, items in texts.items()}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

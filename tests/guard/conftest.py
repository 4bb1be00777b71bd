import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tracerl.guard import scan

# The labelled corpus and its fake-value generators are benchmark code, outside the
# installed package (benchmarks/guard_corpus); the scanner tests use them too.
BENCHMARKS = str(Path(__file__).resolve().parents[2] / "benchmarks")
if BENCHMARKS not in sys.path:
    sys.path.insert(0, BENCHMARKS)


@pytest.fixture
def kinds() -> Callable[[str, str], set[str]]:
    """The kinds one scanner reports at the Guard's default threshold."""

    def kinds_of(text: str, scanner: str) -> set[str]:
        return {f.kind for f in scan(text, [scanner], min_score=0.5)}

    return kinds_of

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tracerl.guard import scan

# The labelled corpus, its fake-value generators and the hand-written paraphrase sets
# live with the detector's training pipeline, outside the installed package
# (guard_training/); the scanner tests use them too.
GUARD_TRAINING = str(Path(__file__).resolve().parents[2] / "guard_training")
if GUARD_TRAINING not in sys.path:
    sys.path.insert(0, GUARD_TRAINING)


@pytest.fixture
def kinds() -> Callable[[str, str], set[str]]:
    """The kinds one scanner reports at the Guard's default threshold."""

    def kinds_of(text: str, scanner: str) -> set[str]:
        return {f.kind for f in scan(text, [scanner], min_score=0.5)}

    return kinds_of

from collections.abc import Callable

import pytest

from tracerl.guard import scan


@pytest.fixture
def kinds() -> Callable[[str, str], set[str]]:
    """The kinds one scanner reports at the Guard's default threshold."""

    def kinds_of(text: str, scanner: str) -> set[str]:
        return {f.kind for f in scan(text, [scanner], min_score=0.5)}

    return kinds_of

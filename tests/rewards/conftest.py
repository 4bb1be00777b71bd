from collections.abc import Iterator

import pytest

from tracerl.sandbox import SandboxPool


@pytest.fixture(scope="session")
def pool() -> Iterator[SandboxPool]:
    """One warm pool for the sandbox tests (fast; every run is still a fresh process)."""
    with SandboxPool(workers=2) as p:
        yield p

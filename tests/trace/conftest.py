"""Fixtures for the trace tests (the builders live in trace_fixtures.py)."""

from __future__ import annotations

import pytest
from trace_fixtures import build_trajectory

from tracerl.types import Trajectory


@pytest.fixture
def trajectory() -> Trajectory:
    return build_trajectory()

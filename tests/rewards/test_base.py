"""`reward_fault`: which values a loss may never see (issue 32)."""

import math

import numpy as np
import pytest

from tracerl.rewards.base import MAX_ABS_REWARD, reward_fault


@pytest.mark.parametrize("value", [0, 1, 0.5, -3.25, True, MAX_ABS_REWARD, -MAX_ABS_REWARD,
                                   np.float32(0.25), np.int64(2), None])
def test_sane_numbers_and_unjudged_pass(value):
    assert reward_fault(value) is None


@pytest.mark.parametrize("value, why", [
    (math.nan, "not finite"), (math.inf, "not finite"), (-math.inf, "not finite"),
    (1e160, "exceeds"), (-1e7, "exceeds"), (np.float64(1e300), "exceeds"),
    ("1.0", "not a number"), (b"1", "not a number"), ([1.0], "not a number"),
    (object(), "not a number"), (10**400, "too large"),
])
def test_faults_say_why(value, why):
    assert why in reward_fault(value)

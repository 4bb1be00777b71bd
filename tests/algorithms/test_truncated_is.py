import math

import pytest
import torch

from tracerl.algorithms.losses import (
    is_stats,
    sequence_truncated_is_weights,
    truncated_is_weights,
)
from tracerl.train.methods import IS_LEVELS


def _logps():
    # two sequences, three positions; the last position of row 1 is masked out
    train = torch.log(torch.tensor([[0.5, 0.4, 0.9], [0.2, 0.3, 0.7]]))
    behaviour = torch.log(torch.tensor([[0.25, 0.4, 0.3], [0.4, 0.3, 0.1]]))
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])
    return train, behaviour, mask


def test_token_weights_are_capped_ratios():
    train, behaviour, _ = _logps()
    w = truncated_is_weights(train, behaviour, cap=2.5)
    expected = torch.tensor([[2.0, 1.0, 2.5], [0.5, 1.0, 2.5]])  # 3.0 and 7.0 capped
    assert torch.allclose(w, expected)


def test_sequence_weights_are_the_capped_product_over_action_tokens():
    train, behaviour, mask = _logps()
    w = sequence_truncated_is_weights(train, behaviour, mask, cap=5.0)
    # row 0: 2.0 * 1.0 * 3.0 = 6 -> 5 (capped); row 1: 0.5 * 1.0 = 0.5 (masked 7.0 ignored)
    assert torch.allclose(w, torch.tensor([[5.0] * 3, [0.5] * 3]))
    assert not w.requires_grad
    big = sequence_truncated_is_weights(torch.zeros(1, 400), torch.full((1, 400), -1.0),
                                        torch.ones(1, 400), cap=2.0)
    assert torch.isfinite(big).all() and big.max().item() == pytest.approx(2.0)


def test_stats_count_truncated_tokens_and_the_mean_weight():
    train, behaviour, mask = _logps()
    w = truncated_is_weights(train, behaviour, cap=2.5)
    stats = is_stats(w, mask, cap=2.5)
    assert stats.clip_fraction == pytest.approx(1 / 5)  # only (0, 2) among action tokens
    assert stats.mean_weight == pytest.approx((2.0 + 1.0 + 2.5 + 0.5 + 1.0) / 5)
    seq = is_stats(sequence_truncated_is_weights(train, behaviour, mask, 5.0), mask, 5.0)
    assert seq.clip_fraction == pytest.approx(3 / 5)


def test_a_bad_cap_is_refused_and_every_level_has_a_table_entry():
    train, behaviour, mask = _logps()
    with pytest.raises(ValueError, match="cap must be > 0"):
        sequence_truncated_is_weights(train, behaviour, mask, 0.0)
    import typing

    from tracerl.algorithms.names import ISLevel

    assert set(typing.get_args(ISLevel)) == set(IS_LEVELS)
    for fn in IS_LEVELS.values():
        assert fn(train, behaviour, mask, math.inf).shape == train.shape

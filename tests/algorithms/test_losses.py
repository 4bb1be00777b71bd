import math

import pytest
import torch

from tracerl.algorithms.losses import aggregate, clipped_policy_loss, sft_loss

LOSS = torch.tensor([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]])
MASK = torch.tensor([[1, 1, 1], [1, 0, 0]])


def test_token_mean():
    assert aggregate(LOSS, MASK, "token-mean").item() == pytest.approx(10 / 4)


def test_seq_mean_token_mean():
    # seq 1: mean 2; seq 2: mean 4 -> 3
    assert aggregate(LOSS, MASK, "seq-mean-token-mean").item() == pytest.approx(3.0)


def test_seq_mean_token_sum_and_fixed_norm():
    # sums 6 and 4 -> 5; with norm_len 2 -> 2.5
    assert aggregate(LOSS, MASK, "seq-mean-token-sum").item() == pytest.approx(5.0)
    assert aggregate(LOSS, MASK, "seq-mean-token-sum", norm_len=2).item() == pytest.approx(2.5)


def test_sequences_without_tokens_do_not_dilute_sequence_means():
    mask = torch.tensor([[1, 1, 1], [0, 0, 0]])
    assert aggregate(LOSS, mask, "seq-mean-token-mean").item() == pytest.approx(2.0)


def test_unknown_aggregation_is_named():
    with pytest.raises(ValueError, match="bogus"):
        aggregate(LOSS, MASK, "bogus")  # type: ignore[arg-type]


def _loss(ratio: float, adv: float, lo: float = 0.2, hi: float = 0.28) -> float:
    logp = torch.tensor([[math.log(ratio)]])
    loss, _ = clipped_policy_loss(logp, torch.zeros(1, 1), torch.tensor([[adv]]),
                                  torch.ones(1, 1), lo, hi)
    return loss.item()


def test_clip_higher_bounds_positive_advantages_at_one_plus_clip_high():
    # A > 0: objective min(r A, clip(r) A); r = 1.5 clipped to 1.28 -> loss -1.28
    assert _loss(1.5, 1.0) == pytest.approx(-1.28)
    assert _loss(1.1, 1.0) == pytest.approx(-1.1)


def test_clip_low_bounds_negative_advantages_at_one_minus_clip_low():
    # A < 0: r = 0.5 -> max(0.5, clip 0.8) * -(-1)... loss = max(-A r, -A clip(r)) = 0.8
    assert _loss(0.5, -1.0) == pytest.approx(0.8)
    # r above the band with A < 0 is not clipped (pessimistic bound): loss = 1.5
    assert _loss(1.5, -1.0) == pytest.approx(1.5)


def test_clip_fraction_and_gradient():
    logp = torch.log(torch.tensor([[1.5, 1.0]])).requires_grad_()
    loss, stats = clipped_policy_loss(logp, torch.zeros(1, 2), torch.ones(1, 2),
                                      torch.ones(1, 2), 0.2, 0.28)
    loss.backward()
    assert stats.clip_fraction == pytest.approx(0.5)
    # clipped token has no gradient; unclipped: d(-r/2)/dlogp = -r/2 = -0.5
    assert logp.grad[0, 0].item() == 0.0
    assert logp.grad[0, 1].item() == pytest.approx(-0.5)


def test_sft_loss_is_masked_nll():
    logp = torch.tensor([[-1.0, -3.0], [-2.0, -9.0]])
    assert sft_loss(logp, torch.tensor([[1, 1], [1, 0]])).item() == pytest.approx(2.0)

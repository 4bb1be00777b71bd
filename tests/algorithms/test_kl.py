import math

import pytest
import torch

from tracerl.algorithms.kl import kl_estimate

LOGP = torch.tensor([[math.log(0.5)]])
REF = torch.tensor([[math.log(0.25)]])  # r = p_ref / p = 0.5, log r = -ln 2


def test_k1():
    assert kl_estimate(LOGP, REF, "k1").item() == pytest.approx(math.log(2))


def test_k2():
    assert kl_estimate(LOGP, REF, "k2").item() == pytest.approx(0.5 * math.log(2) ** 2)


def test_k3():
    assert kl_estimate(LOGP, REF, "k3").item() == pytest.approx(0.5 - 1 + math.log(2))


def test_all_zero_when_policies_agree():
    for est in ("k1", "k2", "k3"):
        assert kl_estimate(LOGP, LOGP, est).item() == 0.0  # type: ignore[arg-type]


def test_k3_is_an_unbiased_estimate_of_the_true_kl():
    p = torch.tensor([0.7, 0.2, 0.1])
    q = torch.tensor([0.4, 0.4, 0.2])
    true_kl = (p * (p / q).log()).sum()
    # expectation over x ~ p, computed exactly
    k3 = kl_estimate(p.log()[None], q.log()[None], "k3")[0]
    assert (p * k3).sum().item() == pytest.approx(true_kl.item(), rel=1e-5)


def test_unknown_estimator():
    with pytest.raises(ValueError, match="k9"):
        kl_estimate(LOGP, REF, "k9")  # type: ignore[arg-type]

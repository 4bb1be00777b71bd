import pytest

from tracerl.optimize.budget import Budget, BudgetExhausted, Ledger


def test_a_call_that_may_not_fit_is_refused_before_it_is_made():
    ledger = Ledger(Budget(calls=3, tokens=100))
    ledger.reserve(2, 100)
    ledger.charge(2, 70)
    with pytest.raises(BudgetExhausted, match="left: 1 calls, 30 tokens"):
        ledger.reserve(1, 31)
    ledger.reserve(1, 30)
    assert ledger.spent.calls == 2 and ledger.spent.tokens == 70


def test_spend_survives_a_restart(tmp_path):
    path = tmp_path / "budget.json"
    ledger = Ledger(Budget(calls=10, tokens=1000), path)
    ledger.charge(4, 400, cached_calls=2)
    again = Ledger(Budget(calls=10, tokens=1000), path)
    assert (again.spent.calls, again.spent.tokens, again.spent.cached_calls) == (4, 400, 2)
    assert again.fraction() == pytest.approx(0.4)


def test_an_empty_budget_is_a_config_error():
    with pytest.raises(ValueError, match="budget.calls"):
        Budget(calls=0)

from fractions import Fraction

import pytest

from tracerl.tools.calculator import CalculatorError, evaluate, format_number


@pytest.mark.parametrize("expr,value", [
    ("1+2*3", 7), ("(1+2)*3", 9), ("-4--2", -2), ("7/2", Fraction(7, 2)), ("2*(3+(4-1))", 12),
    ("  12 * 34 ", 408), ("1.5*2", 3),
])
def test_evaluates_exactly(expr, value):
    assert evaluate(expr) == value


@pytest.mark.parametrize("expr,message", [
    ("", "empty"), ("1+", "end of expression"), ("2**3", "unexpected"), ("1/0", "division by zero"),
    ("__import__('os')", "unsupported character"), ("(1+2", "expected"),
    ("1 2", "after a complete"),
])
def test_rejects_bad_input_with_a_reason(expr, message):
    with pytest.raises(CalculatorError, match=message):
        evaluate(expr)


def test_operation_limit_forces_one_step_per_call():
    assert evaluate("12*34", max_operations=1) == 408
    with pytest.raises(CalculatorError, match="at most 1 operation"):
        evaluate("12*34+1", max_operations=1)


def test_huge_results_are_refused():
    with pytest.raises(CalculatorError, match="digits"):
        evaluate("*".join(["99999999"] * 8))


def test_format_number():
    assert format_number(Fraction(10)) == "10"
    assert format_number(Fraction(1, 4)) == "0.25"

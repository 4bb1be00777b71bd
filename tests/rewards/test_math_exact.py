"""The exact fast path never disagrees with math-verify, and leaves it what it must."""

from __future__ import annotations

import itertools
import warnings

import pytest

from tracerl.rewards.math import _as_latex
from tracerl.rewards.math_exact import exact_verdict

NUMBERS = ["0", "-0", "+0", "7", "007", "-7", "+7", "12", "12.0", "12.00", "0.5", ".5", "0.50",
           "-0.5", "1.5", "1.50000001", "0.1234567", "0.1234568", "3.14159", "3.1416",
           "999999", "999998", "12345678901", "12345678902", "999999999999999",
           "999999999999998", "1234567890123456789", "1234567890123456788", "100", "1e2",
           "1,000", "1000", " 42 ", "$42$"]
SAME = ["\\frac{1}{2}", "-\\frac{3}{4}", "\\dfrac{5}{6}", "\\tfrac{5}{6}", "3/4", "\\sqrt{2}",
        "2\\sqrt{3}", "\\pi", "2\\pi", "\\sqrt{0}", "0\\pi", "\\frac{0}{0}", "0/0",
        "\\frac{1}{0}", "x", "\\infty", "x^2+1", "\\{1,2\\}", "[1, 2)", "\\text{yes}", "{}",
        "\\sqrt{}", "abc", "1/2/3"]
PAIRS = (list(itertools.product(NUMBERS[:24], NUMBERS[:24]))
         + list(itertools.product(NUMBERS[24:], NUMBERS[24:]))
         + [(s, s) for s in SAME]
         + [(s, s + " ") for s in SAME[:6]]
         + [("\\frac{1}{2}", "0.5"), ("\\frac{1}{2}", "1/2"), ("2\\sqrt{3}", "\\sqrt{12}")])


def test_integers_are_decided_both_ways() -> None:
    assert exact_verdict("12", "012") is True
    assert exact_verdict("-3", "3") is False
    assert exact_verdict("1234567890123456", "1234567890123456") is None  # past 15 digits


def test_different_decimals_are_left_to_math_verify() -> None:
    assert exact_verdict("0.5", "0.50") is True
    assert exact_verdict("0.1234567", "0.1234568") is None  # equal after its rounding


def test_identical_strings_are_decided_only_inside_the_finite_grammar() -> None:
    assert exact_verdict("\\frac{1}{2}", " \\frac{1}{2} ") is True
    assert exact_verdict("\\frac{0}{0}", "\\frac{0}{0}") is None  # NaN is not equal to itself
    assert exact_verdict("\\text{yes}", "\\text{yes}") is None  # may not even parse
    assert exact_verdict("\\frac{1}{2}", "0.5") is None


@pytest.mark.slow  # math-verify on ~700 pairs
def test_every_decided_pair_agrees_with_math_verify() -> None:
    from math_verify import parse, verify

    decided, disagree = 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for gold, answer in PAIRS:
            fast = exact_verdict(gold, answer)
            if fast is None:
                continue
            decided += 1
            g = parse(_as_latex(gold), parsing_timeout=None)
            a = parse(_as_latex(answer), parsing_timeout=None)
            slow = bool(g) and bool(a) and verify(g, a, timeout_seconds=None)
            if slow != fast:
                disagree.append((gold, answer, fast, slow))
    assert not disagree
    assert decided >= 200  # both verdicts occur: 73 equal, 148 different when written

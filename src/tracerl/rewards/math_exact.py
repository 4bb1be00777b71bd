"""Cheap verdicts that math-verify would give, decided without sympy.

`math_answer_batch` asks `exact_verdict` first and sends only the undecided pairs to
the sandboxed checker. Each rule below says when it decides and why math-verify cannot
disagree there; tests/rewards/test_math_exact.py checks every decided pair of a corpus
against math-verify itself (in-process), so a rule that drifts from the slow path fails
a test instead of a training run.

- Plain integers on both sides (at most 15 digits, optional sign, leading zeros):
  math-verify compares integers exactly, so equal values are equal and different
  values are different. Longer integers are left to it.
- Plain decimals (or a decimal and an integer): equal Decimal values are equal for
  math-verify too. Different values are *not* decided here: math-verify compares
  numbers after rounding (0.1234567 equals 0.1234568 for it), so only it can say.
- The same string on both sides (whitespace removed) of a small grammar of finite
  numbers (integers, decimals, \\frac{a}{b} and a/b with b non-zero, \\sqrt{n}, \\pi
  and their products by an integer): both parse to the same finite value, and a finite
  value equals itself. Outside that grammar the same string can still be unequal to
  itself (0/0 is NaN) or unparseable (a broken gold is None, not 1.0), so it is left
  to math-verify.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_INT = re.compile(r"[+-]?\d{1,15}")
_DECIMAL = re.compile(r"[+-]?(?:\d{1,15}(?:\.\d{1,15})?|\.\d{1,15})")
_NZ = r"0*[1-9]\d{0,14}"
_ATOM = (rf"\d{{1,15}}(?:\.\d{{1,15}})?|\\[dt]?frac\{{\d{{1,15}}\}}\{{{_NZ}\}}|\d{{1,15}}/{_NZ}"
         r"|\d{0,15}\\sqrt\{\d{1,15}\}|\d{0,15}\\pi")
_SIMPLE = re.compile(rf"[+-]?(?:{_ATOM})")
_SPACE = re.compile(r"\s+")


def normalize(answer: str) -> str:
    """Whitespace removed and one pair of surrounding `$` dropped."""
    s = _SPACE.sub("", answer)
    if len(s) >= 2 and s[0] == "$" and s[-1] == "$" and "$" not in s[1:-1]:
        s = s[1:-1]
    return s


def exact_verdict(gold: str, answer: str) -> bool | None:
    """math-verify's verdict on (gold, answer) when a rule above decides it, else None."""
    g, a = normalize(gold), normalize(answer)
    if _INT.fullmatch(g) and _INT.fullmatch(a):
        return int(g) == int(a)
    if _DECIMAL.fullmatch(g) and _DECIMAL.fullmatch(a):
        try:
            return True if Decimal(g) == Decimal(a) else None
        except InvalidOperation:  # pragma: no cover - the regex admits only valid decimals
            return None
    if g == a and _SIMPLE.fullmatch(g):
        return True
    return None

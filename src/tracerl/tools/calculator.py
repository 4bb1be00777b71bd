"""A safe arithmetic evaluator (a recursive-descent parser, never `eval`).

Grammar (exact rational arithmetic with `Fraction`):

    expr   := term (("+" | "-") term)*
    term   := factor (("*" | "/") factor)*
    factor := ("-" | "+") factor | NUMBER | "(" expr ")"

`max_operations` bounds the binary operators per call, which is how the `calc` task
family makes problems that *need* k calls. Sizes are bounded too, so a policy cannot
make the tool burn CPU with huge numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|(.))")
MAX_DIGITS = 40
MAX_LENGTH = 200


class CalculatorError(ValueError):
    """The expression cannot be evaluated; the message is shown to the agent."""


@dataclass
class _Parser:
    tokens: list[str]
    max_operations: int
    pos: int = 0
    operations: int = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise CalculatorError("unexpected end of expression")
        self.pos += 1
        return tok

    def count_op(self, op: str) -> None:
        self.operations += 1
        if self.operations > self.max_operations:
            raise CalculatorError(
                f"at most {self.max_operations} operation(s) per call; split the work"
            )

    def expr(self) -> Fraction:
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            self.count_op(op)
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(self) -> Fraction:
        value = self.factor()
        while self.peek() in ("*", "/"):
            op = self.take()
            self.count_op(op)
            rhs = self.factor()
            if op == "/" and rhs == 0:
                raise CalculatorError("division by zero")
            value = value * rhs if op == "*" else value / rhs
            _check_size(value)
        return value

    def factor(self) -> Fraction:
        tok = self.take()
        if tok in ("-", "+"):
            inner = self.factor()
            return -inner if tok == "-" else inner
        if tok == "(":
            value = self.expr()
            if self.take() != ")":
                raise CalculatorError("expected ')'")
            return value
        if tok[0].isdigit():
            return Fraction(tok)
        raise CalculatorError(f"unexpected {tok!r}")


def _check_size(value: Fraction) -> None:
    if len(str(abs(value.numerator))) > MAX_DIGITS or len(str(value.denominator)) > MAX_DIGITS:
        raise CalculatorError(f"result has more than {MAX_DIGITS} digits")


def tokenize(expression: str) -> list[str]:
    tokens = []
    for number, other in _TOKEN.findall(expression.strip()):
        if number:
            tokens.append(number)
        elif other.strip():
            if other not in "+-*/()":
                raise CalculatorError(f"unsupported character {other!r}")
            tokens.append(other)
    return tokens


def evaluate(expression: str, max_operations: int = 64) -> Fraction:
    """Evaluate `expression` exactly, or raise CalculatorError saying why not."""
    if len(expression) > MAX_LENGTH:
        raise CalculatorError(f"expression longer than {MAX_LENGTH} characters")
    tokens = tokenize(expression)
    if not tokens:
        raise CalculatorError("empty expression")
    parser = _Parser(tokens, max_operations)
    value = parser.expr()
    if parser.peek() is not None:
        raise CalculatorError(f"unexpected {parser.peek()!r} after a complete expression")
    return value


def format_number(value: Fraction) -> str:
    """Integers as integers; other rationals as decimals to 6 places."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.6f}".rstrip("0").rstrip(".")

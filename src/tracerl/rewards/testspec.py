"""Hidden tests in the shapes datasets use, parsed into cases the harness can run.

Accepted shapes:
- a code block (str): each top-level `assert` is a case, each `def test_*()` is a
  case, and a HumanEval-style `def check(candidate)` is a case when `entry_point`
  names the function; other statements (imports, helpers, variables) are setup and
  run in order.
- a list of snippets (MBPP `test_list`): each snippet is one case, passing when it
  runs without an exception.
- a list of input/output cases (IOCase, or dicts with input/output or stdin/stdout):
  the candidate runs as a program on the input; its stdout must match.
"""

from __future__ import annotations

import ast
import builtins
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import CodeType
from typing import Any


@dataclass(frozen=True)
class IOCase:
    """One program run: `stdin` in, `stdout` expected (trailing whitespace ignored)."""

    stdin: str
    stdout: str


@dataclass(frozen=True)
class SourceCase:
    """One test that runs as trusted code in the parent; passes if it raises nothing."""

    name: str
    code: ast.Module
    setup: bool = False
    """Setup statements run in order but are not counted as tests."""
    compiled: CodeType = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", compile(self.code, f"<tests:{self.name}>", "exec"))


@dataclass(frozen=True)
class TestPlan:
    """Parsed tests: either source cases (function tests) or IO cases, never both."""

    source: tuple[SourceCase, ...] = ()
    io: tuple[IOCase, ...] = ()
    free_names: frozenset[str] = frozenset()
    """Names the tests use but never define: candidates for binding to the candidate."""
    bound_names: frozenset[str] = frozenset()
    """Names the tests bind somewhere (assignments, defs, imports, arguments)."""

    @property
    def total(self) -> int:
        return len(self.io) + sum(1 for c in self.source if not c.setup)


def parse_tests(tests: Any, entry_point: str | None = None) -> TestPlan:
    """Parse `tests` into a TestPlan, with a clear error naming a bad shape.

    Plans are cached: a training run scores many completions of the same Task.
    """
    if isinstance(tests, str) or (isinstance(tests, list | tuple)
                                  and all(isinstance(t, str) for t in tests)):
        key = tests if isinstance(tests, str) else tuple(tests)
        return _parse_cached(key, entry_point)
    return _parse_tests(tests, entry_point)


@functools.lru_cache(maxsize=4096)
def _parse_cached(tests: str | tuple[str, ...], entry_point: str | None) -> TestPlan:
    return _parse_tests(tests, entry_point)


def _parse_tests(tests: Any, entry_point: str | None) -> TestPlan:
    if isinstance(tests, str):
        return _from_block(tests, entry_point)
    if isinstance(tests, Mapping) or not isinstance(tests, Sequence) or not tests:
        raise ValueError(
            "tests must be a code block (str), a non-empty list of assert snippets, "
            f"or a non-empty list of input/output cases; got {type(tests).__name__}"
        )
    if all(isinstance(t, str) for t in tests):
        cases = [SourceCase(f"snippet[{i}]", _parse(t, f"tests[{i}]")) for i, t in enumerate(tests)]
        return _plan(cases)
    return TestPlan(io=tuple(_io_case(t, i) for i, t in enumerate(tests)))


def _parse(code: str, where: str) -> ast.Module:
    try:
        return ast.parse(code)
    except SyntaxError as exc:
        raise ValueError(f"{where} is not valid Python: {exc}") from None


def _io_case(item: Any, i: int) -> IOCase:
    if isinstance(item, IOCase):
        return item
    if isinstance(item, Mapping):
        stdin = item.get("input", item.get("stdin"))
        stdout = item.get("output", item.get("stdout"))
        if isinstance(stdin, str) and isinstance(stdout, str):
            return IOCase(stdin, stdout)
    raise ValueError(
        f"tests[{i}] must be a str snippet, an IOCase, or a dict with str 'input' and "
        f"'output'; got {item!r:.80}"
    )


def _from_block(code: str, entry_point: str | None) -> TestPlan:
    tree = _parse(code, "tests")
    cases: list[SourceCase] = []
    for i, stmt in enumerate(tree.body):
        is_assert = isinstance(stmt, ast.Assert)
        name = f"line {stmt.lineno}: {ast.unparse(stmt)[:60]}" if is_assert else f"setup[{i}]"
        cases.append(SourceCase(name, ast.Module([stmt], []), setup=not is_assert))
    defined = [s.name for s in tree.body if isinstance(s, ast.FunctionDef)]
    for fn in defined:
        if fn.startswith("test"):
            cases.append(SourceCase(f"{fn}()", _parse(f"{fn}()", fn)))
    if "check" in defined and entry_point:
        cases.append(SourceCase(f"check({entry_point})", _parse(f"check({entry_point})", "check")))
    plan = _plan(cases)
    if plan.total == 0:
        raise ValueError("tests: the code block has no assert, no test_* function and no "
                         "check(candidate) with an entry_point")
    return plan


def _plan(cases: list[SourceCase]) -> TestPlan:
    loaded, bound = _names([c.code for c in cases])
    return TestPlan(source=tuple(cases), free_names=loaded - bound - set(dir(builtins)),
                    bound_names=bound)


def _names(trees: list[ast.Module]) -> tuple[frozenset[str], frozenset[str]]:
    """(names loaded, names bound) anywhere in the tests."""
    loaded: set[str] = set()
    bound: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
    return frozenset(loaded), frozenset(bound)

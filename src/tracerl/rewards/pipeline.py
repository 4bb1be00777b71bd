"""Which asserts of a test plan can have their candidate call made ahead of time.

A function test such as `assert add(2, 3) == 5` costs one round trip to the sandboxed
candidate. Consecutive asserts of that shape are independent: each calls the candidate
once, with arguments the tests compute themselves, and compares the value here. So
code_tests sends the argument tuples of such a run in one pipelined request (see
tracerl.sandbox.Session.stream) and then runs each assert with the call replaced by its
already-received value. The comparison still runs in the trusted parent, the candidate
still never sees an expected value, and the calls reach it in the same order with the
same arguments as one by one; what changes is only that it answers them back to back.

An assert qualifies when, read from its syntax alone:
- it calls exactly one candidate function, once, by its plain name, and mentions no
  other candidate name;
- everything else in it, the call's arguments included, is side-effect free: literals,
  names, arithmetic, comparisons, subscripts and calls of a few pure built-ins (`len`,
  `sorted`, `abs`, ...); no attribute calls, lambdas, comprehensions or `:=`, which
  could observe or change state between two asserts.
Anything else (setup statements, test functions, HumanEval `check(candidate)`) runs as
before, one call at a time. One difference remains by design: an operation on an object
the candidate returned by reference (not a plain value) reaches the candidate after the
rest of the run's calls, not between them.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
from dataclasses import dataclass
from types import CodeType

from tracerl.rewards.testspec import SourceCase

SLOT = "__tracerl_pipelined__"
"""The name the rewritten assert calls to get its pipelined value."""
PURE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "dict", "float", "frozenset", "int", "len", "list", "max",
    "min", "range", "reversed", "round", "set", "sorted", "str", "sum", "tuple", "bytes",
    "complex",
})
_SAFE_NODES = (
    ast.Expression, ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.UnaryOp,
    ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript, ast.Slice, ast.Name,
    ast.Load, ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
    ast.JoinedStr, ast.FormattedValue, ast.keyword, ast.Call,
)


@dataclass(frozen=True)
class PipelinedCall:
    """One assert whose single candidate call can be made before the assert runs."""

    func: str
    """The candidate function it calls."""
    arguments: CodeType
    """Evaluates, in the tests' namespace, to (args tuple, kwargs dict) of the call."""
    check: CodeType
    """The assert with the call replaced by `SLOT()`, which yields the received value."""
    source: str = ""
    """`arguments` as source text (what tracerl.rewards.prepared may send instead of
    a big constant's value)."""


def _pure(node: ast.AST, free_names: frozenset[str], call: ast.Call | None) -> bool:
    """Side-effect free and free of candidate names, treating `call` as an opaque value."""
    for sub in ast.walk(node):
        if sub is call:
            continue
        if not isinstance(sub, _SAFE_NODES):
            return False
        if isinstance(sub, ast.Name) and sub.id in free_names and not _inside(sub, call):
            return False
        if isinstance(sub, ast.Call) and sub is not call and not _inside(sub, call):
            pure = (isinstance(sub.func, ast.Name) and sub.func.id in PURE_BUILTINS
                    and sub.func.id not in free_names and hasattr(builtins, sub.func.id))
            if not pure or any(k.arg is None for k in sub.keywords):
                return False
    return True


def _inside(node: ast.AST, call: ast.Call | None) -> bool:
    return call is not None and any(node is sub for sub in ast.walk(call))


@functools.lru_cache(maxsize=4096)
def pipelined_call(case: SourceCase, free_names: frozenset[str]) -> PipelinedCall | None:
    """The pipelined form of `case`, or None when it does not qualify (see above)."""
    if case.setup or len(case.code.body) != 1 or not isinstance(case.code.body[0], ast.Assert):
        return None
    stmt = case.code.body[0]
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id in free_names]
    if len(calls) != 1:
        return None
    call = calls[0]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    parts = [call.args and ast.Tuple(call.args, ast.Load()), *[k.value for k in call.keywords]]
    if not all(_pure(p, free_names, None) for p in parts if p):
        return None
    if not _pure(stmt.test, free_names, call) or (stmt.msg and not _pure(stmt.msg, free_names,
                                                                         None)):
        return None
    expr = _arguments(call)
    return PipelinedCall(call.func.id, compile(expr, "<pipelined arguments>", "eval"),
                         _check(stmt, call, case.name), ast.unparse(expr))


def _arguments(call: ast.Call) -> ast.Expression:
    kwargs = ast.Dict([ast.Constant(k.arg) for k in call.keywords],
                      [k.value for k in call.keywords])
    expr = ast.Expression(ast.Tuple([ast.Tuple(list(call.args), ast.Load()), kwargs],
                                    ast.Load()))
    return ast.fix_missing_locations(expr)


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.Call) -> None:
        self.target = target

    def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802 - ast's naming
        if node is self.target:
            return ast.copy_location(ast.Call(ast.Name(SLOT, ast.Load()), [], []), node)
        return self.generic_visit(node)


def _check(stmt: ast.Assert, call: ast.Call, name: str) -> CodeType:
    tree = ast.Module([_Replace(call).visit(_copy(stmt, call))], [])
    return compile(ast.fix_missing_locations(tree), f"<tests:{name}>", "exec")


def _copy(stmt: ast.Assert, call: ast.Call) -> ast.Assert:
    """A copy of `stmt` that keeps `call` itself, so the transformer can find it by id."""
    memo = {id(call): call}
    return copy.deepcopy(stmt, memo)

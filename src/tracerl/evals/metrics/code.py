"""Code in the answer: Python syntax validity, banned imports and calls, and hidden tests
run in the sandbox (tracerl.rewards.code.code_tests, as a Metric).

The code is the last fenced Python (or unlabelled) block of the final answer, else the
whole answer (tracerl.rewards.extract.extract_code, what the code reward reads). An
empty or unparseable program is the policy's: it scores 0, also for `BannedCode`
(code that cannot be parsed cannot be shown to be clean). Banned names are found in
the syntax tree, not by text search, so `import osmosis`, a comment `# import os` and
the string "eval(" are not violations, while `import subprocess as sp; sp.run(...)`,
`from os import system` and `__import__("os")` are.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from tracerl.evals.fault import Unjudged
from tracerl.evals.items import EvalItem
from tracerl.evals.metric import MetricResult
from tracerl.rewards.code import code_tests
from tracerl.rewards.extract import extract_code
from tracerl.sandbox import SandboxPool

BANNED_IMPORTS = ("os", "subprocess", "socket", "shutil", "ctypes", "pty", "multiprocessing")
BANNED_CALLS = ("eval", "exec", "compile", "__import__", "importlib.import_module", "os.system")
DYNAMIC_IMPORTS = ("__import__", "importlib.import_module")


def parse_python(text: str) -> tuple[ast.Module | None, str]:
    """(tree, "") for the answer's code, or (None, why) when it is empty or invalid."""
    code = extract_code(text)
    if not code.strip():
        return None, "no code in the answer"
    try:
        return ast.parse(code), ""
    except SyntaxError as exc:
        return None, f"line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # null bytes
        return None, str(exc)


@dataclass(frozen=True)
class PythonSyntax:
    """1.0 when the answer's code parses as Python; the error line is in details.

    >>> from tracerl.evals.items import item_from_text
    >>> PythonSyntax()(item_from_text("```python\\ndef f(:\\n```")).details["error"]
    'line 1: invalid syntax'
    """

    name: str = "code_syntax"

    def __call__(self, item: EvalItem) -> MetricResult:
        tree, why = item.derived("python", parse_python)
        return MetricResult(float(tree is not None), passed=tree is not None,
                            details={"error": why} if why else {})


def _dotted(node: ast.AST) -> str:
    """`a.b.c` for a Name/Attribute chain, "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted module or object it is bound to by an import."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    out[a.asname] = a.name
                else:
                    head = a.name.split(".")[0]
                    out[head] = head
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _violations(tree: ast.Module, imports: set[str], calls: set[str]) -> list[str]:
    def banned(module: str) -> bool:
        return any(module == b or module.startswith(b + ".") for b in imports)

    aliases = _aliases(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if banned(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and banned(node.module):
            found.append(f"line {node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call) and (name := _dotted(node.func)):
            head, _, rest = name.partition(".")
            full = aliases.get(head, head) + (f".{rest}" if rest else "")
            arg = node.args[0] if node.args else None
            if full in calls or name in calls:
                found.append(f"line {node.lineno}: call {full}()")
            elif (full in DYNAMIC_IMPORTS and isinstance(arg, ast.Constant)
                  and isinstance(arg.value, str) and banned(arg.value)):
                found.append(f"line {node.lineno}: {full}({arg.value!r})")
    return sorted(found, key=lambda f: int(f.split(":")[0][5:]))


@dataclass(frozen=True)
class BannedCode:
    """1.0 when the answer's code imports none of `imports` (submodules included) and
    calls none of `calls` (aliases resolved); unparseable or empty code scores 0.

    >>> from tracerl.evals.items import item_from_text
    >>> code = "import subprocess as sp\\nimport osmosis  # import os\\nsp.run(['ls'])"
    >>> BannedCode()(item_from_text(code)).details["violations"]
    ['line 1: import subprocess']
    """

    imports: tuple[str, ...] = BANNED_IMPORTS
    calls: tuple[str, ...] = BANNED_CALLS
    name: str = "banned_code"

    def __call__(self, item: EvalItem) -> MetricResult:
        tree, why = item.derived("python", parse_python)
        if tree is None:
            return MetricResult(0.0, passed=False, details={"error": why})
        found = _violations(tree, set(self.imports), set(self.calls))
        return MetricResult(float(not found), passed=not found, details={"violations": found})


@dataclass(frozen=True)
class CodeTests:
    """Hidden tests run against the answer's code in the sandbox (`code_tests`, which a
    candidate cannot game): the share of cases passed (with `partial` False, 1 or 0,
    and the run stops at the first failure: details `ran` says how many cases ran,
    `passed` how many of them passed). Tests come from reference field
    `tests` (else `answer`), the entry point from `entry_point`. A sandbox failure is
    None (infrastructure), missing tests are Unjudged.

    >>> CodeTests().name
    'code_tests'
    """

    timeout_s: float = 5.0
    partial: bool = True
    pool: SandboxPool | None = None
    name: str = "code_tests"

    def __call__(self, item: EvalItem) -> MetricResult:
        tests: Any = item.reference.get("tests", item.reference.get("answer"))
        if tests is None:
            raise Unjudged("no reference field 'tests' (or 'answer')")
        try:
            result = code_tests(extract_code(item.output_text()), tests, timeout_s=self.timeout_s,
                                partial=self.partial, pool=self.pool,
                                entry_point=item.reference.get("entry_point"))
        except (ValueError, TypeError) as exc:
            raise Unjudged(f"reference tests do not parse: {exc}") from exc
        return MetricResult(result.score, passed=result.score == 1.0 if result.score is not None
                            else None, details={"status": result.status,
                                                "passed": result.passed, "total": result.total,
                                                "ran": result.details.get("ran")})

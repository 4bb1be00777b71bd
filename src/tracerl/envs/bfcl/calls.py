"""Call strings (`cd(folder='document')`) read and written without `eval`.

BFCL's multi-turn ground truth, and its decoded model output, are Python call
expressions, which its harness runs with `eval()` on live simulator objects. Here a
call string is parsed with `ast` and only this shape is accepted: a plain function name
called with literal arguments (strings, numbers, booleans, None, and lists, tuples,
dicts and sets of them; a leading minus). That is every call in BFCL's ground truth,
and every call tracerl writes from a JSON tool call. Anything else (an attribute such
as `os.system`, a nested call, a variable) is refused with an error that reads like
the one `eval` gives, and never runs.

Threat model: the policy's text is untrusted. It reaches a simulator only as a method
name looked up among the public methods of the episode's simulator instances and as
literal values; no name is resolved in any Python namespace.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any


class CallSyntaxError(ValueError):
    """A call string that is not `name(literal, ..., key=literal, ...)`."""


@dataclass(frozen=True)
class ParsedCall:
    """A call string, parsed."""

    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name):
        # what eval() would say: the name is looked up and is not there
        raise CallSyntaxError(f"name '{node.id}' is not defined")
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as e:
        raise CallSyntaxError(f"argument is not a literal value: {ast.unparse(node)[:80]} "
                              f"({e})") from None


def parse_call(text: str) -> ParsedCall:
    """`name(args..., key=value...)` with literal values; CallSyntaxError otherwise."""
    try:
        tree = ast.parse(text.strip(), filename="<string>", mode="eval")
    except SyntaxError as e:
        raise CallSyntaxError(str(e)) from None
    node = tree.body
    if not isinstance(node, ast.Call):
        raise CallSyntaxError(f"not a function call: {text[:80]!r}")
    if not isinstance(node.func, ast.Name):
        raise CallSyntaxError(f"only plain function names can be called, got "
                              f"{ast.unparse(node.func)[:60]!r}")
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords):
        raise CallSyntaxError("*args and **kwargs are not accepted in a call")
    args = tuple(_literal(a) for a in node.args)
    kwargs = {k.arg: _literal(k.value) for k in node.keywords if k.arg is not None}
    return ParsedCall(node.func.id, args, kwargs)


def format_call(name: str, arguments: dict[str, Any]) -> str:
    """The call string of a JSON tool call (keyword arguments, Python literals)."""
    inner = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return f"{name}({inner})"

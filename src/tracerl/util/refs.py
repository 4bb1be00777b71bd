"""`module:attribute` references to users' own code, resolved with errors that say why.

A run directory must say how to rebuild everything it trained with, because `tracerl
eval RUN` and `train --resume RUN` rebuild the task family and the reward from
config.yaml alone. An object given from Python is recorded as the reference that
imports it back (`rebuild_reference`); one that cannot be (defined in `__main__`, a
lambda, arguments that cannot be read back) is recorded as `<python: NAME; WHY>`, a
value that every resolver refuses with a message naming the key to set, so nothing
else (the default family) is ever built in its place.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from typing import Any


class UnresolvedReference(ValueError):
    """A `module:attribute` reference that cannot be resolved."""


def is_reference(text: str) -> bool:
    module, sep, attr = text.partition(":")
    return bool(sep and module and attr)


NOT_RECORDED = "<python"


def not_recorded(name: str, why: str) -> str:
    """The config value of an object from Python that cannot be rebuilt (see above)."""
    return f"{NOT_RECORDED}: {name}; {why}>"


def import_reference(ref: str, what: str) -> Any:
    """The object `ref` ("pkg.module:name" or "pkg.module:Outer.name") names; `what` says
    what it is for, in the error ("task.family", "reward")."""
    if ref.startswith(NOT_RECORDED):
        raise UnresolvedReference(
            f"{what}: this run's {what} was given from Python as an object that cannot be "
            f"rebuilt ({ref[len(NOT_RECORDED) + 2:-1]}); give {what}=module:attribute "
            "naming it (an importable module, e.g. a file in the current directory)")
    if not is_reference(ref):
        raise UnresolvedReference(f"{what}={ref!r}: expected module:attribute, e.g. "
                              "my_pkg.tasks:UnitsFamily")
    module_name, _, path = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as e:
        raise UnresolvedReference(f"{what}={ref!r}: cannot import {module_name!r} ({e}); is it "
                              "installed or on PYTHONPATH?") from e
    for part in path.split("."):
        if not hasattr(obj, part):
            raise UnresolvedReference(f"{what}={ref!r}: {module_name!r} has no attribute {path!r}")
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Rebuild:
    """How to rebuild an object given from Python: `module:attribute` called with `args`
    (none: the attribute is the object itself, or a class called with no arguments)."""

    ref: str
    args: dict[str, Any] = field(default_factory=dict)
    call: bool = False
    """True when `ref` names a class to call (with `args`), False when it names the object."""


PLAIN = (str, int, float, bool, type(None))


def _plain(value: Any) -> bool:
    """Data that survives config.yaml unchanged (YAML scalars, lists, string-keyed maps)."""
    if isinstance(value, PLAIN):
        return True
    if type(value) is list:
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _same(value: Any, default: Any) -> bool:
    try:
        return bool(value is default or value == default)
    except Exception:  # noqa: BLE001 - an == that raises (arrays) is "not the same"
        return False


def _importable(module: str, qualname: str, target: Any) -> str | None:
    """`module:qualname` when importing it gives back `target` itself, else why not."""
    if module == "__main__":
        return "it is defined in the running script (__main__), which cannot be imported again"
    if "<lambda>" in qualname:
        return "it is a lambda"
    if "<locals>" in qualname:
        return "it is defined inside a function"
    try:
        found = import_reference(f"{module}:{qualname}", "object")
    except UnresolvedReference:
        return f"{module}:{qualname} does not import"
    return None if found is target else f"{module}:{qualname} names another object"


def rebuild_reference(obj: Any, supplied: frozenset[str] = frozenset()) -> Rebuild | str:
    """How to rebuild `obj` from config (a Rebuild), or the reason it cannot be (a str).

    A module-level function, class or instance is named as it is. An instance of an
    importable class is its class called with the arguments its `__init__` names,
    read back from the attributes of the same name; arguments in `supplied` are given
    again at rebuild (a family's guard) and not recorded. An argument with no such
    attribute, or whose value is not plain data, makes the object not rebuildable:
    guessing its value would rebuild a different object.
    """
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):  # a function or a class
        why = _importable(module, qualname, obj)
        return Rebuild(f"{module}:{qualname}") if why is None else why
    module_obj = sys.modules.get(type(obj).__module__)
    for name, value in vars(module_obj).items() if module_obj is not None else ():
        if value is obj and type(obj).__module__ != "__main__":  # a module-level instance
            return Rebuild(f"{type(obj).__module__}:{name}")
    cls = type(obj)
    why = _importable(cls.__module__, cls.__qualname__, cls)
    if why is not None:
        return f"its class {cls.__qualname__}: {why}"
    return _constructor_args(obj, supplied)


def _constructor_args(obj: Any, supplied: frozenset[str]) -> Rebuild | str:
    cls = type(obj)
    try:
        params = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):
        return f"the arguments of {cls.__qualname__} cannot be read"
    args: dict[str, Any] = {}
    for p in params:
        if p.kind is p.VAR_KEYWORD or p.name in supplied:
            continue
        if p.kind is p.VAR_POSITIONAL:
            return f"{cls.__qualname__} takes *{p.name}, which cannot be recorded"
        if not hasattr(obj, p.name):
            return (f"its argument {p.name!r} is not kept as an attribute of that name, so "
                    "its value cannot be recorded")
        value = getattr(obj, p.name)
        if p.default is not p.empty and _same(value, p.default):
            continue  # rebuilt with its default
        if not _plain(value):
            return f"its argument {p.name!r} is a {type(value).__name__}, not plain data"
        args[p.name] = value
    return Rebuild(f"{cls.__module__}:{cls.__qualname__}", args, call=True)

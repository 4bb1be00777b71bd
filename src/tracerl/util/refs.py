"""`module:attribute` references to users' own code, resolved with errors that say why."""

from __future__ import annotations

import importlib
from typing import Any


class UnresolvedReference(ValueError):
    """A `module:attribute` reference that cannot be resolved."""


def is_reference(text: str) -> bool:
    module, sep, attr = text.partition(":")
    return bool(sep and module and attr)


def import_reference(ref: str, what: str) -> Any:
    """The object `ref` ("pkg.module:name" or "pkg.module:Outer.name") names; `what` says
    what it is for, in the error ("task.family", "reward")."""
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

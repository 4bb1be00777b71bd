"""Package namespaces that import their members on first use (PEP 562).

A package `__init__` that imports its modules eagerly makes `import tracerl.train.config`
load torch, transformers and OpenTelemetry, because Python runs every parent package's
`__init__` first. With `lazy_exports` the package still offers `tracerl.train.Trainer`,
but the module behind a name is imported only when that name is read.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`(__getattr__, __dir__)` for `package`, mapping each public name to its module.

    A name that is also a submodule's name (`tracerl.rewards.audit`, the function, and
    `tracerl/rewards/audit.py`) is resolved now: importing the submodule later would
    otherwise bind the module to that name and hide the export.
    """
    here = globals_of(package)
    submodules = {info.name for info in pkgutil.iter_modules(here.get("__path__", []))}
    for name in sorted(set(exports) & submodules):
        here[name] = getattr(importlib.import_module(exports[name]), name)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals_of(package)[name] = value  # later reads skip __getattr__
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals_of(package)) | set(exports))

    return __getattr__, __dir__


def globals_of(package: str) -> dict[str, Any]:
    return vars(importlib.import_module(package))

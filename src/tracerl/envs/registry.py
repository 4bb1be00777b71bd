"""The task-family registry: each family registers itself with its own config section.

A family module declares a frozen dataclass of its knobs (read from `task.<name>.*`
in YAML or `key=value`) and a builder, and registers both:

    @dataclass(frozen=True)
    class UnitsConfig:
        digits: int = 2
        \"\"\"Digits per operand.\"\"\"

    @register_family("units", UnitsConfig)
    def build_units(section: UnitsConfig, context: FamilyContext) -> UnitsFamily:
        return UnitsFamily(section.digits, guard=context.guard)

The trainer, `tracerl eval` and the config's `--help` all go through this table, so
adding a family touches its own file (and its tests) only. Built-in families live in
the modules of this package and are found by importing them. A family outside the
package is named as `module:attribute` and imported on use: a builder registered as
above (its section's defaults apply), a TaskFamily class or zero-argument factory
(given the FamilyContext fields its signature names: `guard=`, `tool_timeout_s=`,
`describe_tools=`, plus `task.family_args`), or a TaskFamily instance. A module in the
current directory is found by the `tracerl` command (it puts the directory on
sys.path, as `python -m` does).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING, Any

from tracerl.util.refs import UnresolvedReference, import_reference

if TYPE_CHECKING:
    from tracerl.envs.family import TaskFamily
    from tracerl.guard.pipeline import Guard


@dataclass(frozen=True)
class FamilyContext:
    """What every family is built with, whatever its own section says."""

    guard: Guard | None = None
    """Guardrails for every tool call and tool output (None = off)."""
    tool_timeout_s: float = 5.0
    """Wall-clock limit of one tool call."""
    describe_tools: bool = False
    """Describe the tools to the policy in its prompt (ToolEnvConfig.describe_tools)."""


Builder = Callable[[Any, FamilyContext], "TaskFamily"]


@dataclass(frozen=True)
class FamilySpec:
    name: str
    section: type
    """Frozen dataclass of the family's knobs (`task.<name>.*`)."""
    build: Builder
    """(section, context) -> the TaskFamily."""
    summary: str
    """One line for `--help` (the builder's docstring)."""


class UnknownFamilyError(ValueError):
    """A task family name that is neither registered nor an importable reference."""


_REGISTRY: dict[str, FamilySpec] = {}
_BUILTINS_LOADED = False


def register_family(name: str, section: type) -> Callable[[Builder], Builder]:
    """Decorator: register `build(section, context) -> TaskFamily` under `name`."""
    if not name.isidentifier():
        raise ValueError(f"family name {name!r} must be an identifier (it is a config key)")
    if not (is_dataclass(section) and isinstance(section, type)):
        raise TypeError(f"family {name!r}: section must be a dataclass type, got {section!r}")

    def decorate(build: Builder) -> Builder:
        known = _REGISTRY.get(name)
        if known is not None and known.build.__qualname__ != build.__qualname__:
            raise ValueError(f"task family {name!r} is already registered by "
                             f"{known.build.__module__}.{known.build.__qualname__}")
        summary = (build.__doc__ or "").strip().splitlines()
        _REGISTRY[name] = FamilySpec(name, section, build, summary[0] if summary else "")
        build.family_name = name  # type: ignore[attr-defined]  # lets references find the spec
        return build

    return decorate


def families() -> Mapping[str, FamilySpec]:
    """Every registered family, the built-in ones loaded first."""
    _load_builtins()
    return dict(_REGISTRY)


@dataclass(frozen=True)
class NoSection:
    """A family named by reference has no config section of its own."""


def resolve(name: str, args: Mapping[str, Any] | None = None) -> FamilySpec:
    """The spec for a registered name or a `module:attribute` reference; `args` are the
    keyword arguments a referenced class or factory is called with (`task.family_args`)."""
    _load_builtins()
    if name in _REGISTRY and not args:
        return _REGISTRY[name]
    if ":" not in name:
        raise UnknownFamilyError(f"unknown task family {name!r}; registered: "
                                 f"{sorted(_REGISTRY)} (or give module:attribute)")
    try:
        target = import_reference(name, "task.family")
    except UnresolvedReference as e:
        raise UnknownFamilyError(str(e)) from e
    registered = getattr(target, "family_name", None)
    builds_itself = (registered is not None and registered in _REGISTRY) or _is_family(target)
    if args and (builds_itself or not callable(target)):
        raise UnknownFamilyError(f"task.family_args {dict(args)} apply to a family class or "
                                 f"factory; {name!r} is a registered builder or an instance")
    if registered is not None and registered in _REGISTRY:
        return _REGISTRY[registered]
    if _is_family(target):
        return FamilySpec(name, NoSection, lambda section, context: target, "")
    if callable(target):
        return FamilySpec(name, NoSection, lambda section, context: _construct(
            name, target, context, dict(args or {})), "")
    raise UnknownFamilyError(f"task family {name!r}: expected a TaskFamily class, factory or "
                             f"instance, or a @register_family builder; got {type(target)}")


def _is_family(obj: Any) -> bool:
    return not isinstance(obj, type) and all(
        hasattr(obj, a) for a in ("tasks", "make_env", "reward"))


def _construct(name: str, factory: Callable[..., Any], context: FamilyContext,
               args: dict[str, Any]) -> TaskFamily:
    """Call a family class or factory with `args` and the context's fields it accepts."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    kwargs = {f.name: getattr(context, f.name) for f in fields(FamilyContext)
              if f.name in params}
    kwargs.update(args)
    try:
        family = factory(**kwargs)
    except TypeError as e:
        raise UnknownFamilyError(f"task family {name!r}: calling it with {sorted(kwargs)} "
                                 f"failed ({e}); give its parameters defaults") from e
    if not _is_family(family):
        raise UnknownFamilyError(f"task family {name!r} built {type(family).__name__}, which "
                                 "lacks tasks(), make_env() or reward")
    return family


def build_family(name: str, section: Any, context: FamilyContext,
                 args: Mapping[str, Any] | None = None) -> TaskFamily:
    """Build family `name` from its section (None = the section's defaults); `args`: the
    keyword arguments of a family class named by reference (`task.family_args`)."""
    spec = resolve(name, args)
    return spec.build(section if section is not None else spec.section(), context)


def _load_builtins() -> None:
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    package = importlib.import_module("tracerl.envs")
    for info in pkgutil.walk_packages(package.__path__, "tracerl.envs."):
        importlib.import_module(info.name)

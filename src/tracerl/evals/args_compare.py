"""How two tool calls' arguments are compared when matching trajectories.

An `ArgSpec` is one of:
  "exact"     every argument equal
  "ignore"    names only
  "subset"    the output's arguments are a subset of the reference's (no invented args)
  "superset"  the output has every reference argument (extra ones allowed)
  [keys...]   only these keys are compared
  callable    `(output_args, reference_args) -> bool`
and `args=` takes one spec for all tools or a mapping `{tool_name: spec}`, with "*"
as the default for tools not named (else "exact").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

ArgsComparator = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
ArgSpec = str | Sequence[str] | ArgsComparator
ArgsOption = ArgSpec | Mapping[str, ArgSpec]

NAMED = ("exact", "ignore", "subset", "superset")


def _contains(big: Mapping[str, Any], small: Mapping[str, Any]) -> bool:
    return all(k in big and big[k] == v for k, v in small.items())


def comparator(spec: ArgSpec) -> ArgsComparator:
    """The comparison function a spec names (validated, with a clear error)."""
    if callable(spec):
        return spec
    if isinstance(spec, str):
        if spec == "exact":
            return lambda out, ref: dict(out) == dict(ref)
        if spec == "ignore":
            return lambda out, ref: True
        if spec == "subset":
            return lambda out, ref: _contains(ref, out)
        if spec == "superset":
            return lambda out, ref: _contains(out, ref)
        raise ValueError(f"argument comparison must be one of {NAMED}, a key list or a "
                         f"callable, got {spec!r}")
    keys = tuple(spec)
    if not all(isinstance(k, str) for k in keys):
        raise ValueError(f"argument key list must hold strings, got {spec!r}")
    return lambda out, ref: all(out.get(k) == ref.get(k) for k in keys)


def comparator_for(option: ArgsOption) -> Callable[[str], ArgsComparator]:
    """Resolve `args=` into a per-tool lookup."""
    if isinstance(option, Mapping):
        table = {name: comparator(spec) for name, spec in option.items()}
        default = table.get("*", comparator("exact"))
        return lambda tool: table.get(tool, default)
    single = comparator(option)
    return lambda tool: single


def differing_keys(out: Mapping[str, Any], ref: Mapping[str, Any]) -> list[str]:
    """Keys whose values differ or that only one side has (for diagnostics)."""
    return sorted(k for k in set(out) | set(ref) if out.get(k, ...) != ref.get(k, ...))

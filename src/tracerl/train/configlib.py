"""Typed dataclass configs from YAML plus `key=value` overrides, with clear errors.

Every field's docstring (the string literal under it) is its help text; `describe()`
lists every knob with type, default and help, which is what `tracerl train --help`
prints. Unknown keys and ill-typed values raise ConfigError naming the dotted key.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import types
import typing
from functools import cache
from typing import Any

import yaml


class ConfigError(ValueError):
    """A config key or value is wrong; the message names the key and what was expected."""


@cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (and its bases), read from source."""
    docs: dict[str, str] = {}
    for base in reversed(cls.__mro__[1:]):
        if dataclasses.is_dataclass(base):
            docs.update(field_docs(base))
    docs.update(_own_field_docs(cls))
    return docs


def _own_field_docs(cls: type) -> dict[str, str]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, nxt in zip(body, body[1:], strict=False):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)):
            docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


_YAML_BOOLS = {False: {"off", "no", "n", "false"}, True: {"on", "yes", "y", "true"}}


def _field_default(f: dataclasses.Field[Any]) -> Any:
    """The default of a dataclass field (a fresh one for factories), or MISSING."""
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def _coerce(key: str, value: Any, tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for option in typing.get_args(tp):
            try:
                return _coerce(key, value, option)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(f"{key}: {value!r} is not {_type_name(tp)}")
    if tp is type(None):
        if value is None:
            return None
        raise ConfigError(f"{key}: expected null, got {value!r}")
    if origin is typing.Literal:
        if isinstance(value, bool):
            # YAML 1.1 reads off/no (on/yes) as false (true): give back the option so spelt.
            spelt = [o for o in typing.get_args(tp) if str(o).lower() in _YAML_BOOLS[value]]
            if len(spelt) == 1:
                return spelt[0]
        if value in typing.get_args(tp):
            return value
        raise ConfigError(f"{key}: {value!r} is not one of {list(typing.get_args(tp))}")
    if origin is list or (origin is tuple and typing.get_args(tp)[1:] == (Ellipsis,)):
        # a frozen section may hold a list as `tuple[X, ...]`: YAML and key=value give lists
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        item = (typing.get_args(tp) or (Any,))[0]
        items = [_coerce(f"{key}[{i}]", v, item) for i, v in enumerate(value)]
        return items if origin is list else tuple(items)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{key}: expected true or false, got {value!r}")
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp is float and isinstance(value, str):
        # YAML 1.1 reads `1e-4` (no dot) as a string; accept any float literal.
        try:
            return float(value)
        except ValueError:
            pass
    if tp in (int, float, str) and (not isinstance(value, tp) or isinstance(value, bool)):
        raise ConfigError(f"{key}: expected {tp.__name__}, got {type(value).__name__} {value!r}")
    return value


def from_dict(cls: type, data: dict[str, Any], prefix: str = "") -> Any:
    """Build dataclass `cls` from a nested dict; reject unknown keys and bad values."""
    if not isinstance(data, dict):
        raise ConfigError(f"{prefix.rstrip('.') or 'config'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(
            f"unknown config key {prefix + unknown[0]!r}; valid keys here: {sorted(fields)}")
    kwargs = {}
    for name, value in data.items():
        tp = hints[name]
        key = prefix + name
        if dataclasses.is_dataclass(tp):
            # A nested section starts from its field's default, which may differ from
            # its class's (guard.tool_call.secrets defaults to block, a bare Rule to flag).
            default = _field_default(fields[name])
            if isinstance(value, dict) and dataclasses.is_dataclass(default):
                value = _merge(to_dict(default), value)
            kwargs[name] = from_dict(tp, value, key + ".")  # type: ignore[arg-type]
        else:
            kwargs[name] = _coerce(key, value, tp)
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{prefix.rstrip('.') or 'config'}: {e}") from e


def to_dict(obj: Any) -> dict[str, Any]:
    return dataclasses.asdict(obj)


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `a.b=value` strings (values parsed as YAML scalars/lists) to a nested dict."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r} is not of the form key=value")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw) if raw else ""
        except yaml.YAMLError:
            value = raw
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {key!r}: {part!r} is not a section")
        node[parts[-1]] = value
    return data


def load(cls: type, yaml_path: str | None = None, overrides: list[str] | None = None,
         base: dict[str, Any] | None = None) -> Any:
    """Defaults <- base dict <- YAML file <- overrides, validated into `cls`."""
    data: dict[str, Any] = dict(base or {})
    if yaml_path:
        try:
            with open(yaml_path) as f:
                loaded = yaml.safe_load(f) or {}
        except OSError as e:
            raise ConfigError(f"{yaml_path}: cannot read it ({e.strerror})") from e
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(e, "problem", None) or str(e)
            raise ConfigError(f"{yaml_path}: not valid YAML{where}: {problem}") from e
        if not isinstance(loaded, dict):
            raise ConfigError(f"{yaml_path}: the top level must be a mapping")
        data = _merge(data, loaded)
    data = apply_overrides(data, overrides or [])
    upgrade = getattr(cls, "upgrade_keys", None)
    if upgrade is not None:
        try:
            data = upgrade(data)
        except ValueError as e:
            raise ConfigError(str(e)) from e
    return from_dict(cls, data)


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def describe(cls: type, prefix: str = "", defaults: Any = None) -> list[tuple[str, str, str, str]]:
    """(key, type, default, help) for every leaf field, for `--help`; `defaults` is the
    instance whose values are shown (a nested section's field default, not its class's)."""
    rows = []
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        doc = docs.get(f.name) or f.metadata.get("doc", "")
        tp = hints[f.name]
        default = _field_default(f) if defaults is None else getattr(defaults, f.name)
        if dataclasses.is_dataclass(tp):
            nested = default if dataclasses.is_dataclass(default) else None
            rows += describe(tp, prefix + f.name + ".", nested)  # type: ignore[arg-type]
            continue
        shown = "" if default is dataclasses.MISSING else default
        rows.append((prefix + f.name, _type_name(tp), repr(shown), doc))
    return rows

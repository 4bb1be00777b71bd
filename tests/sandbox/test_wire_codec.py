"""The value codec: exact round trips for built-ins, opaque references for the rest."""

from __future__ import annotations

import math

import pytest

from tracerl.sandbox import _wire

VALUES = [None, True, 0, -(10**30), 1.5, "text", b"\x00\xff", 2 + 3j, [1, (2, 3)],
          {"k": [1, {2}]}, frozenset({1}), (), {(1, 2): "tuple key"}]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_builtin_values_round_trip_exactly(value: object) -> None:
    back = _wire.decode(_wire.encode(value))
    assert back == value and type(back) is type(value)


def test_nan_survives() -> None:
    assert math.isnan(_wire.decode(_wire.encode(float("nan"))))


def test_bool_is_not_confused_with_int() -> None:
    assert _wire.decode(_wire.encode(True)) is True and type(_wire.decode(_wire.encode(1))) is int


def test_int_subclass_travels_as_a_reference_not_an_int() -> None:
    class Sneaky(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    refs: list[object] = []
    encoded = _wire.encode(Sneaky(0), lambda o: refs.append(o) or {"id": 0})
    assert encoded == {"r": {"id": 0}} and refs


def test_untagged_containers_are_rejected() -> None:
    with pytest.raises(_wire.WireError, match="untagged"):
        _wire.decode([1, 2])


def test_unknown_tags_are_rejected() -> None:
    with pytest.raises(_wire.WireError, match="unknown tag"):
        _wire.decode({"pickle": "..."})


def test_too_deep_nesting_is_rejected() -> None:
    data: object = "x"
    for _ in range(_wire.MAX_DEPTH + 5):
        data = {"l": [data]}
    with pytest.raises(_wire.WireError, match="deep"):
        _wire.decode(data)

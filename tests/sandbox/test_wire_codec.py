"""The value codec: exact round trips for built-ins, opaque references for the rest."""

from __future__ import annotations

import json
import math
import socket
import threading

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


def test_flat_containers_keep_exact_types_on_the_fast_path() -> None:
    values = [list(range(100)), tuple("abc"), {1.5, 2.5}, frozenset({"x"}), [True, None, 0.0],
              [True] * 1000, [1] * 999 + [True], [2**64] * 1000, ["a"] * 1000]
    for value in values:
        encoded = _wire.encode(value)
        assert list(encoded.values())[0] == list(value)  # untagged items: the fast path
        back = _wire.decode(_wire.encode(value))
        assert back == value and type(back) is type(value)
        assert [type(v) for v in back] == [type(v) for v in value]


@pytest.mark.parametrize("value", [
    list(range(-500, 500)), tuple(range(2**62, 2**62 + 300)), set(range(1000)),
    frozenset(range(300)), [0.1 * i for i in range(300)] + [float("nan"), -0.0, float("inf")],
])
def test_long_runs_of_ints_or_floats_travel_packed_and_exact(value: object) -> None:
    encoded = _wire.encode(value)
    (tag, payload), = encoded.items()
    assert tag.endswith("#") and [type(x) for x in payload] == [str, str]
    back = _wire.decode(json.loads(json.dumps(encoded)))
    assert type(back) is type(value) and [type(v) for v in back] == [type(v) for v in value]
    assert repr(sorted(back, key=repr)) == repr(sorted(value, key=repr))  # NaN and -0.0 too


@pytest.mark.parametrize("payload", [
    5, "", "x", "qAAAAAAAAAAA=", ["q"], ["q", "AAA"], ["z", "AAAAAAAAAAA="], ["q", 5],
    ["q", "AAAAAAAAAAA=", "x"], ["q", "AAAA"],
])
def test_malformed_packed_payloads_are_rejected(payload: object) -> None:
    with pytest.raises(_wire.WireError):
        _wire.decode({"l#": payload})


def test_a_subclass_inside_a_list_still_travels_as_a_reference() -> None:
    class Sneaky(int):
        pass

    refs: list[object] = []
    encoded = _wire.encode([1, Sneaky(2)], lambda o: refs.append(o) or {"id": 0})
    assert encoded == {"l": [1, {"r": {"id": 0}}]} and len(refs) == 1


def test_a_list_payload_must_be_a_list() -> None:
    with pytest.raises(_wire.WireError, match="not a list"):
        _wire.decode({"l": "abc"})


def test_reader_splits_back_to_back_messages_and_big_ones_across_chunks() -> None:
    a, b = socket.socketpair()
    reader = _wire.Reader(b)
    reader.CHUNK = 7  # frames straddle every read
    msgs = [{"ok": True, "value": i} for i in range(5)] + [{"big": "x" * 100_000}]
    sender = threading.Thread(target=lambda: [_wire.send_msg(a, m) for m in msgs])
    sender.start()
    assert [reader.recv_msg() for _ in msgs] == msgs
    sender.join()
    a.sendall(b"\x00\x00\x00\x09{\"x\"")  # a message cut short by the peer's exit
    a.close()
    assert reader.recv_msg() is None
    b.close()


def test_messages_encode_as_json_dumps_would() -> None:
    values = [{"ok": True, "value": {"l": [1, 2.5, None, "\u00e9\n", -0.0]}},
              {"nan": float("nan"), "inf": [float("inf"), -float("inf")], "": {}},
              [[], [[]], "x" * 1000, 2**70]]
    for value in values:
        assert _wire.dumps(value) == json.dumps(value, separators=(",", ":")).encode()
    with pytest.raises(TypeError, match="not JSON serializable"):
        _wire.dumps({"x": object()})


def test_messages_decode_as_json_loads_would_even_off_the_fast_path() -> None:
    assert _wire._loads(b'{"a":[1,2.5,NaN]}')["a"][:2] == [1, 2.5]
    assert _wire._loads(bytearray(b' {"a": 1}\n')) == {"a": 1}  # whitespace: json.loads
    assert _wire._loads('{"a": "\u00e9"}'.encode("utf-16")) == {"a": "\u00e9"}
    for bad in (b"", b"{", b'{"a":1} x', b"\xff"):
        with pytest.raises(_wire.WireError):
            _wire._loads(bad)


def test_a_frame_nested_too_deep_for_the_parser_is_a_wire_error() -> None:
    """Not a RecursionError: that would escape the reader and the grader (a candidate
    can write such a frame on its session socket; see the crash_grader_parser hack)."""
    with pytest.raises(_wire.WireError):
        _wire._loads(b"[" * 100_000 + b"]" * 100_000)


def test_reader_takes_a_message_bigger_than_its_chunk_whole() -> None:
    a, b = socket.socketpair()
    reader = _wire.Reader(b)
    big = {"l#": _wire.encode(list(range(200_000)))["l#"]}  # about 2 MB
    msgs = [{"n": 1}, big, {"n": 2}, big]
    sender = threading.Thread(target=lambda: [_wire.send_msg(a, m) for m in msgs])
    sender.start()
    got = [reader.recv_msg() for _ in msgs]
    sender.join()
    assert got == msgs and _wire.decode(got[1]) == list(range(200_000))
    a.sendall(_wire._HEADER.pack(1 << 20) + b"x" * 1000)  # a big message cut short
    a.close()
    assert reader.recv_msg() is None
    b.close()


def test_reader_pulls_what_has_arrived_without_waiting_and_counts_whole_messages() -> None:
    a, b = socket.socketpair()
    reader = _wire.Reader(b)
    assert reader.pull() == 0 and reader.buffered() == 0  # nothing yet: no wait
    frames = b"".join(len(m).to_bytes(4, "big") + m for m in (b'{"a":1}', b'{"b":2}'))
    a.sendall(frames + b"\x00\x00\x00\x09{\"c\"")  # two whole messages and a part
    assert reader.pull() == len(frames) + 8 and reader.buffered() == 2
    assert reader.recv_msg() == {"a": 1} and reader.buffered() == 1
    a.close()
    assert reader.pull() == -1 and reader.recv_msg() == {"b": 2} and reader.recv_msg() is None
    b.close()

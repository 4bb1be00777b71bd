"""Framing and a strict value codec for the sandbox's pipes (standard library only).

This module is imported both by the trusted parent and by the sandbox worker, which
runs it as a plain script on a bare interpreter, so it must not import tracerl.

Why a custom codec and not pickle: pickle from an untrusted process executes code in
the reader. Why not plain JSON: JSON cannot tell a tuple from a list or keep NaN, and
a reward must compare the exact value the candidate returned. Every container is a
tagged JSON object; the decoder rebuilds only built-in types, with exact type checks
on the encoder side (`type(v) is int`, never isinstance) so an int subclass whose
`__eq__` always returns True travels as an opaque reference, not as an int.
"""

from __future__ import annotations

import _socket
import base64
import binascii
import json
import json.decoder
import json.encoder
import socket
import struct
from array import array
from collections.abc import Callable
from typing import Any

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 200
BIG_MESSAGE = 1 << 16
_HEADER = struct.Struct("!I")


class WireError(Exception):
    """A malformed frame or value: the peer broke the protocol."""


def _not_json(obj: Any) -> Any:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


# json.dumps/loads as one C call each, built once: the json module's Python layer
# (an encoder object per dumps, encoding detection per loads) was most of their cost on
# our small messages, and in a forked child each Python function it runs is a
# copy-on-write page fault or more (issue 15). Same output and acceptance as
# json.dumps(obj, separators=(",", ":")) and json.loads, cycles aside: messages are
# built fresh by us or by `encode` (depth-bounded), so none has a cycle.
_ENCODER = json.encoder.c_make_encoder and json.encoder.c_make_encoder(
    None, _not_json, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
_SCAN = json.decoder.JSONDecoder().scan_once


def dumps(obj: Any) -> bytes:
    """`obj` as compact JSON bytes (ASCII), as every message goes on the wire."""
    if _ENCODER:
        return "".join(_ENCODER(obj, 0)).encode()
    return json.dumps(obj, separators=(",", ":")).encode()  # pragma: no cover - no _json


def send_msg(sock: _socket.socket, obj: Any, fds: list[int] | None = None) -> None:
    """Send one length-prefixed JSON message, optionally carrying file descriptors.
    `obj` as bytes is taken as already JSON-encoded (a message built once, sent often)."""
    data = obj if type(obj) is bytes else dumps(obj)
    if len(data) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {len(data)} bytes exceeds {MAX_MESSAGE_BYTES}")
    header = _HEADER.pack(len(data))
    if len(data) > BIG_MESSAGE and not fds:  # two sends cost less than copying it
        sock.sendall(header)
        sock.sendall(data)
        return
    frame = header + data
    if fds:
        sent = socket.send_fds(sock, [frame[:1]], fds)
        frame = frame[sent:]
    sock.sendall(frame)


def _recv_exact(sock: _socket.socket, n: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < n:
        part = sock.recv(min(n - len(chunks), 1 << 20))
        if not part:
            return None
        chunks += part
    return bytes(chunks)


def recv_msg(sock: socket.socket, *, with_fds: bool = False) -> tuple[Any, list[int]]:
    """Receive one message; returns (None, []) at end of stream."""
    fds: list[int] = []
    if with_fds:
        first, fds, _flags, _addr = socket.recv_fds(sock, 1, 8)
        if not first:
            return None, fds
        rest = _recv_exact(sock, _HEADER.size - 1)
        head = None if rest is None else first + rest
    else:
        head = _recv_exact(sock, _HEADER.size)
    if head is None:
        return None, fds
    body = _recv_exact(sock, _size(head))
    if body is None:
        return None, fds
    return _loads(body), fds


def _size(head: bytes | bytearray) -> int:
    (size,) = _HEADER.unpack_from(head)
    if size > MAX_MESSAGE_BYTES:
        raise WireError(f"peer announced a {size}-byte message (limit {MAX_MESSAGE_BYTES})")
    return size


def _loads(body: bytes | bytearray) -> Any:
    """One message's value. The fast path reads what our encoder writes (UTF-8, no
    surrounding whitespace); anything else gets json.loads' full acceptance and errors.
    Nesting too deep for the parser is a broken protocol too, not a RecursionError that
    would escape the reader (a candidate could write such a frame on its socket)."""
    try:
        text = body.decode()
        value, end = _SCAN(text, 0)
        if end == len(text):
            return value
    except (ValueError, StopIteration, RecursionError):
        pass
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise WireError(f"undecodable message: {exc}") from None


class Reader:
    """Messages from one socket, read in large chunks: replies that arrive back to back
    (a pipelined request's) cost one recv between them instead of two each. A message
    bigger than a chunk is read straight into a buffer of its own size: in a forked
    child every fresh megabyte is 256 page faults, so a 10^5-int argument must not be
    copied through a growing buffer and its slices (issue 15)."""

    CHUNK = 1 << 18

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self._buf = bytearray()

    def recv_msg(self) -> Any:
        """The next message; None at end of stream (a partial message included)."""
        buf = self._buf
        while len(buf) < _HEADER.size:
            if not self._fill():
                return None
        end = _HEADER.size + _size(buf)
        if len(buf) < end and end - len(buf) > self.CHUNK:
            return self._recv_big(end)
        while len(buf) < end:
            if not self._fill():
                return None
        body = buf[_HEADER.size:end]
        del buf[:end]
        return _loads(body)

    def pull(self) -> int:
        """Read what has arrived, without waiting: bytes read, -1 at end of stream.
        For a socket without a timeout (with one, recv would wait for it first)."""
        got = 0
        while True:
            try:
                part = self.sock.recv(self.CHUNK, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return got
            if not part:
                return -1
            self._buf += part
            got += len(part)

    def buffered(self) -> int:
        """How many whole messages the buffer holds."""
        buf, at, count = self._buf, 0, 0
        while len(buf) - at >= _HEADER.size:
            at += _HEADER.size + _size(buf[at:at + _HEADER.size])
            if at > len(buf):
                break
            count += 1
        return count

    def _fill(self) -> bool:
        part = self.sock.recv(self.CHUNK)
        self._buf += part
        return bool(part)

    def _recv_big(self, end: int) -> Any:
        body = bytearray(end - _HEADER.size)
        have = len(self._buf) - _HEADER.size
        body[:have] = memoryview(self._buf)[_HEADER.size:]
        self._buf.clear()
        view = memoryview(body)
        while have < len(body):
            n = self.sock.recv_into(view[have:])
            if not n:
                return None
            have += n
        view.release()
        return _loads(body)


# ---------------------------------------------------------------- value codec

RefHook = Callable[[Any], Any]
_SCALARS = frozenset({type(None), bool, str, int, float})
"""Types JSON keeps exactly; a container holding only these needs no per-item tags."""
PACK_MIN = 256
"""Flat containers of at least this many ints or floats travel packed: 8 bytes an item
in base64 instead of decimal text, which JSON writes and parses an item at a time (a
10^5-int test argument cost tens of milliseconds each way)."""
_PACKED = {int: "q", float: "d"}
_TAGS = {list: "l", tuple: "t", set: "s", frozenset: "fs"}
_BUILD: dict[str, Any] = {"l": list, "t": tuple, "s": set, "fs": frozenset}


def encode(value: Any, to_ref: RefHook | None = None, _depth: int = 0) -> Any:
    """Encode a plain value as tagged JSON; anything else goes through `to_ref`."""
    if _depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    t = type(value)
    if value is None or t is bool or t is str or t is int or t is float:
        return value  # JSON keeps these apart: 1 / 1.0 / true; NaN and Infinity included
    if t is complex:
        return {"c": [repr(value.real), repr(value.imag)]}
    if t is bytes:
        return {"b": value.hex()}
    d = _depth + 1
    if t is list or t is tuple or t is set or t is frozenset:
        tag = _TAGS[t]
        if len(value) >= PACK_MIN:
            types = set(map(type, value))  # one C-level type scan
            packed = _pack(value, types.pop()) if len(types) == 1 else None
            if packed is not None:
                return {tag + "#": packed}
        if _SCALARS.issuperset(map(type, value)):  # fast path: no per-item tags
            return {tag: list(value)}
        return {tag: [encode(v, to_ref, d) for v in value]}
    if t is dict:
        return {"d": [[encode(k, to_ref, d), encode(v, to_ref, d)] for k, v in value.items()]}
    if to_ref is None:
        raise WireError(f"cannot encode a value of type {t.__name__}")
    return {"r": to_ref(value)}


def decode(data: Any, from_ref: RefHook | None = None, _depth: int = 0) -> Any:
    """Rebuild a value from `encode`'s output, accepting built-in types only."""
    if _depth > MAX_DEPTH:
        raise WireError("value nested too deeply")
    t = type(data)
    if data is None or t is bool or t is str or t is int or t is float:
        return data
    if type(data) is not dict or len(data) != 1:
        raise WireError(f"untagged value in stream: {str(data)[:80]}")
    (tag, payload), d = next(iter(data.items())), _depth + 1
    try:
        if tag == "c":
            return complex(float(payload[0]), float(payload[1]))
        if tag == "b":
            return bytes.fromhex(payload)
        if tag in ("l", "t", "s", "fs"):
            if type(payload) is not list:
                raise TypeError(f"payload is a {type(payload).__name__}, not a list")
            flat = _SCALARS.issuperset(map(type, payload))
            items = payload if flat else [decode(v, from_ref, d) for v in payload]
            return _BUILD[tag](items)
        if tag == "d":
            return {decode(k, from_ref, d): decode(v, from_ref, d) for k, v in payload}
        if tag[-1:] == "#" and tag[:-1] in _BUILD:
            return _BUILD[tag[:-1]](_unpack(payload))
    except (TypeError, ValueError, IndexError) as exc:
        raise WireError(f"bad {tag!r} value: {exc}") from None
    if tag == "r" and from_ref is not None:
        return from_ref(payload)
    raise WireError(f"unknown tag {tag!r}")


def _pack(value: Any, item_type: type) -> list[str] | None:
    """Items all of exact type int (each fitting in 64 bits) or float, packed; else None.
    Exact types only: a bool or an int subclass never gets here (`item_type` is the one
    type every item has)."""
    code = _PACKED.get(item_type)
    if code is None:
        return None
    try:
        raw = array(code, value).tobytes()
    except OverflowError:
        return None
    return [code, base64.b64encode(raw).decode("ascii")]


def _unpack(payload: Any) -> list[Any]:
    """The items of a packed container ([type code, base64]): exact ints or floats."""
    if type(payload) is not list or len(payload) != 2 or payload[0] not in _PACKED.values() \
            or type(payload[1]) is not str:
        raise TypeError("packed payload must be ['q' or 'd', base64 text]")
    # Strict: our encoder writes canonical base64, and the strict decoder is about twice
    # as fast on a 10^5-item list (issue 15). Any bytes are valid items. The type code
    # travels apart from the text, which is decoded in place (no copy of a slice), and
    # the items come straight off the decoded bytes (no array copy).
    raw = binascii.a2b_base64(payload[1], strict_mode=True)
    if len(raw) % 8:
        raise ValueError(f"packed payload of {len(raw)} bytes is not whole items")
    return memoryview(raw).cast(payload[0]).tolist()

"""The RPC loop a session child runs after loading the candidate (standard library only).

Untrusted by design: it runs in the same process as the candidate, which may rewrite
it. Nothing here is believed by the parent except "this is the value the candidate
produced", and the parent never sends it anything to forge against: requests carry
call arguments, never expected values (see tracerl.rewards.code for the other half).

Requests: {"op": OP, "target": {"global": NAME} | {"ref": ID}, ...}. OPs: names (list
the candidate's top-level names), call, getattr, len, iter, getitem, contains, str,
repr, bool. Replies: {"ok": true, "value": ENCODED} or {"ok": false, "exc": TYPE,
"msg": TEXT}. Non-plain results come back as references the parent can call again.

One request is pipelined: {"op": "map", "target": ..., "calls": [{"args": ENCODED,
"kwargs": ENCODED} | {"expr": SOURCE}, ...]} calls the target once per entry, in order
(SOURCE: an expression of the (args, kwargs) pair, over literals and pure built-ins,
evaluated here: how a big constant argument such as `list(range(10**5))` travels),
and sends one reply per call as soon as it returns. The parent reads each with its own
deadline, so a call that hangs is still caught alone, while n calls cost one round
trip, not n. A map with "last": true ends the serve loop once answered, unless an
answer handed out a reference (the parent has nothing else to ask, so the child need
not wait for EOF).
"""

from __future__ import annotations

import _socket
import builtins
import socket
import types
from typing import Any

if __package__:
    from tracerl.sandbox import _wire
else:  # pragma: no cover - inside the sandbox
    import _wire  # type: ignore[no-redef]

MAX_ITER_ITEMS = 100_000


class _Refs:
    """Objects the parent holds references to, by integer id."""

    def __init__(self) -> None:
        self.objects: list[Any] = []

    def add(self, obj: Any) -> dict:
        self.objects.append(obj)
        return {"id": len(self.objects) - 1, "callable": callable(obj), "type": type(obj).__name__}

    def get(self, payload: Any) -> Any:
        return self.objects[int(payload["id"])]


def _names(glb: dict) -> dict:
    out = {}
    for name, value in glb.items():
        if name.startswith("__") or isinstance(value, types.ModuleType):
            continue
        out[name] = value
    return out


def _target(req: dict, glb: dict, refs: _Refs) -> Any:
    spec = req["target"]
    if "global" in spec:
        return glb[spec["global"]]
    return refs.get(spec["ref"])


def _dispatch(req: dict, glb: dict, refs: _Refs) -> Any:
    op = req["op"]
    if op == "names":
        return _names(glb)
    obj = _target(req, glb, refs)
    arg = _wire.decode(req.get("arg"), refs.get)
    if op == "call":
        if "expr" in req:  # arguments built here, from literals and pure built-ins
            args, kwargs = eval(str(req["expr"]), {"__builtins__": builtins})
        else:
            args = _wire.decode(req.get("args", {"t": []}), refs.get)
            kwargs = _wire.decode(req.get("kwargs", {"d": []}), refs.get)
        return obj(*args, **kwargs)
    if op == "getattr":
        return getattr(obj, str(arg))
    if op == "iter":
        out = []
        for item in obj:
            out.append(item)
            if len(out) > MAX_ITER_ITEMS:
                raise OverflowError("iterator yielded too many items")
        return out
    simple = {"len": len, "str": str, "repr": repr, "bool": bool}
    if op in simple:
        return simple[op](obj)
    if op == "getitem":
        return obj[arg]
    if op == "contains":
        return arg in obj
    raise ValueError(f"unknown op {op!r}")


def _answer(req: dict, glb: dict, refs: _Refs) -> dict:
    try:
        value = _dispatch(req, glb, refs)
        return {"ok": True, "value": _wire.encode(value, refs.add)}
    except Exception as exc:  # the candidate's exception, reported by type name
        return {"ok": False, "exc": type(exc).__name__, "msg": str(exc)[:2000]}


def _map(req: dict, glb: dict, refs: _Refs, sock: _socket.socket) -> bool:
    """Answer a pipelined `map` request: one reply per call, sent as each returns.
    True when the request was marked `last` and no answer handed out a reference: the
    parent then has nothing left to ask, and the child can end without waiting for EOF."""
    calls = req.get("calls")
    if type(calls) is not list:
        _wire.send_msg(sock, {"ok": False, "exc": "ValueError", "msg": "map needs calls"})
        return False
    held = len(refs.objects)
    for call in calls:
        one = {"op": "call", "target": req.get("target")}
        if type(call) is dict and "expr" in call:
            one["expr"] = call["expr"]
        elif type(call) is dict:
            one.update(args=call.get("args", {"t": []}), kwargs=call.get("kwargs", {"d": []}))
        _wire.send_msg(sock, _answer(one, glb, refs))
    return req.get("last") is True and len(refs.objects) == held


def serve(sock: _socket.socket, glb: dict, *, load_error: int, first: Any = None) -> None:
    """Answer requests until the parent closes the socket. The hello carries the
    answer to a `names` request, saving the parent one round trip. `first` is a request
    that came with the job, answered after the hello as if it had been read first."""
    refs = _Refs()
    hello: dict[str, Any] = {"loaded": load_error == 0}
    if load_error == 0:
        hello["names"] = _answer({"op": "names"}, glb, refs)
    _wire.send_msg(sock, hello)
    reader = _wire.Reader(sock)
    req = first
    while True:
        if req is None:
            req = reader.recv_msg()
            if req is None:
                return
        if type(req) is dict and req.get("op") == "map":
            if _map(req, glb, refs, sock):
                return
        else:
            _wire.send_msg(sock, _answer(req, glb, refs))
        req = None


WARM_ROUNDS = 40


def warm(rounds: int = WARM_ROUNDS) -> None:
    """Run the serve loop on sample requests, in the worker, before any fork.

    In Python 3.11 the first calls of a function write to its code object (a warm-up
    counter, then the specialised bytecode and its counters). Each forked child would
    pay those writes again as copy-on-write page faults, which cost microseconds each
    on a virtual machine (issue 15); done here, every child inherits warm code. Trusted
    code on sample values only: no candidate has run in this process.
    """
    def sample(*args: Any, **kwargs: Any) -> list[Any]:
        return [args, kwargs, 1.5, "text", None, True, (1, 2), {1: 2}, {3}, b"x", sample]

    glb = {"sample": sample, "number": 3, "text": "text"}
    calls: list[dict[str, Any]] = [
        {"args": _wire.encode(args), "kwargs": _wire.encode(kwargs)} for args, kwargs in (
            ((1, [2, 3], "x"), {}), (([1.5, None, True], (4,)), {"key": {5: "v"}}),
            ((list(range(_wire.PACK_MIN)),), {}), ((), {}))]
    calls.append({"expr": "((list(range(3)),), {})"})
    requests = [{"op": "map", "target": {"global": "sample"}, "calls": calls},
                {"op": "call", "target": {"global": "sample"}, "args": calls[1]["args"]},
                {"op": "getattr", "target": {"ref": 0}, "arg": "__name__"}]
    for _ in range(rounds):
        ours, theirs = socket.socketpair()
        try:
            for req in requests:
                _wire.send_msg(theirs, req)
            theirs.shutdown(socket.SHUT_WR)
            serve(ours, glb, load_error=0, first=requests[0])
            ours.close()
            while theirs.recv(1 << 16):
                pass
        finally:
            ours.close()
            theirs.close()

"""The child's serve loop, run in-process on a socket pair (trusted sample code)."""

from __future__ import annotations

import os
import socket

from tracerl.sandbox import _serve, _wire


def _serve_requests(glb: dict, requests: list[dict]) -> list[dict]:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        for req in requests:
            _wire.send_msg(theirs, req)
        theirs.shutdown(socket.SHUT_WR)
        _serve.serve(ours, glb, load_error=0)
        ours.close()
        reader = _wire.Reader(theirs)
        replies = []
        while (msg := reader.recv_msg()) is not None:
            replies.append(msg)
    return replies


def test_a_call_may_carry_its_arguments_as_an_expression_built_in_the_child() -> None:
    def f(xs: list[int], k: int = 0) -> list[int]:
        return [type(xs).__name__, len(xs), xs[-1], k]

    calls = [{"expr": "((list(range(5000)),), {'k': 2})"},
             {"args": _wire.encode(([7],)), "kwargs": _wire.encode({})},
             {"expr": "((1 / 0,), {})"}]
    hello, *replies = _serve_requests({"f": f}, [
        {"op": "map", "target": {"global": "f"}, "calls": calls}])
    assert hello["loaded"] is True
    assert [_wire.decode(r.get("value")) for r in replies[:2]] == [
        ["list", 5000, 4999, 2], ["list", 1, 7, 0]]
    assert replies[2] == {"ok": False, "exc": "ZeroDivisionError", "msg": "division by zero"}


def test_warming_the_loop_leaves_nothing_open() -> None:
    before = sorted(os.listdir("/proc/self/fd"))
    _serve.warm(rounds=3)
    assert sorted(os.listdir("/proc/self/fd")) == before

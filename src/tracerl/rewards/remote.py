"""The trusted side of a candidate session: proxies that call into the sandbox.

Tests run in the trusted parent. Every name a test takes from the candidate is bound
to a RemoteObject; calling it sends the arguments to the sandboxed child and returns
the decoded value. Only built-in types come back (tracerl.sandbox._wire), so the
comparison `==` in the test runs on the parent's own ints, lists and strings: an object
whose `__eq__` always answers True never reaches it (it arrives as a RemoteObject,
which compares by identity). The child never sees an expected value.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tracerl.sandbox import Limits, SandboxPool, Session, _wire

MAX_SESSIONS = 3
"""Fresh processes one code_tests call may start after the candidate crashed or hung."""


class CandidateCrashed(BaseException):  # noqa: N818 - not an Exception on purpose
    """The candidate process died, hung or broke the protocol.

    A BaseException so that test code's `except Exception` cannot swallow it and
    count a crash as the expected error.
    """


class CandidateError(Exception):
    """The candidate raised an exception that is not a built-in type."""


def _exception_for(name: str, msg: str) -> Exception:
    """Re-raise a candidate exception as the built-in type of that name, if there is one."""
    cls = getattr(builtins, name, None)
    safe = isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(
        cls, StopIteration | StopAsyncIteration
    )
    if safe:
        try:
            return cls(msg)
        except Exception:  # some built-ins need special constructor arguments
            pass
    return CandidateError(f"{name}: {msg}")


@dataclass(frozen=True)
class Outcome:
    """What one pipelined call gave: its value, or the exception to raise in its place."""

    value: Any
    error: BaseException | None = None

    def __call__(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class CandidateRPC:
    """One candidate under test: restarts its session after a crash, up to a limit."""

    def __init__(self, pool: SandboxPool, code: str, limits: Limits, call_timeout_s: float):
        self.pool, self.code, self.limits = pool, code, limits
        self.call_timeout_s = call_timeout_s
        self.session: Session | None = None
        self.generation = 0
        self.sessions_started = 0
        self.crashes = 0
        self.results: list[Any] = []
        self._ahead = 0

    def _live(self) -> Session:
        if self.session is not None and self.session.alive:
            return self.session
        if self.session is not None:
            self.results.append(self.session.close())
            self.crashes += 1
        if self.sessions_started >= MAX_SESSIONS:
            raise CandidateCrashed("candidate crashed or hung too often; not restarted")
        self.sessions_started += 1
        self.generation += 1
        self.session = Session(self.pool, self.code, self.limits, self.call_timeout_s)
        return self.session

    def start(self, ahead: bytes | None = None, replies: int = 0, last: bool = False) -> bool:
        """Start the first session; False if the candidate did not load. `ahead` (a
        `map_request` expecting `replies` replies) goes out with the job, before the
        candidate has even loaded; `take_ahead` reads its answers. `last`: `ahead` was
        built with `last=True`, so the child ends once it has answered."""
        self._ahead = replies if ahead is not None else 0
        self.sessions_started += 1
        self.generation += 1
        # The child ends after the hello and these replies: read them once it has.
        settle = 1 + replies if ahead is not None and last else 0
        self.session = Session(self.pool, self.code, self.limits, self.call_timeout_s, ahead,
                               settle)
        return self.session.loaded

    def request(self, msg: dict[str, Any], generation: int | None = None) -> Any:
        session = self._live()
        if generation is not None and generation != self.generation:
            raise CandidateCrashed("reference into a candidate process that has died")
        reply = session.request(msg, self.call_timeout_s)
        if reply is None:
            raise CandidateCrashed("candidate process died or timed out")
        return self._value(reply)

    def map(self, func: str, calls: list[bytes]) -> list[Outcome]:
        """Call candidate function `func` once per encoded call (`map_request`'s), in
        order, in one pipelined request. Returns one Outcome per call that was answered,
        and a crash outcome for the call that hung or killed the process, where it stops
        (the calls after it were never made; the next request starts a fresh session)."""
        session = self._live()
        msg = map_request(func, calls)
        return self._outcomes(session.stream(msg, len(calls), self.call_timeout_s))

    def take_ahead(self) -> list[Outcome]:
        """The outcomes of the request sent with the first session (`start(ahead=...)`),
        read now; empty when none was sent or that session ended before answering."""
        session, n = self.session, self._ahead
        self._ahead = 0
        if session is None or n == 0 or self.generation != 1:
            return []
        return self._outcomes(session.stream(None, n, self.call_timeout_s))

    def _outcomes(self, replies: Iterator[dict[str, Any] | None]) -> list[Outcome]:
        out: list[Outcome] = []
        for reply in replies:
            if reply is None:
                out.append(Outcome(None, CandidateCrashed("candidate process died or timed out")))
                break
            try:
                out.append(Outcome(self._value(reply)))
            except (Exception, CandidateCrashed) as exc:
                out.append(Outcome(None, exc))
        return out

    def _value(self, reply: Any) -> Any:
        """The value of a reply, or the candidate's exception raised as ours."""
        if not isinstance(reply, dict):
            raise CandidateCrashed("malformed reply from candidate")
        if reply.get("ok") is True:
            try:
                return _wire.decode(reply.get("value"), self._ref)
            except _wire.WireError as exc:
                raise CandidateCrashed(f"malformed value from candidate: {exc}") from None
        if reply.get("ok") is False:
            raise _exception_for(str(reply.get("exc")), str(reply.get("msg")))
        raise CandidateCrashed("malformed reply from candidate")

    def _ref(self, payload: Any) -> RemoteObject:
        if not isinstance(payload, dict) or not isinstance(payload.get("id"), int):
            raise _wire.WireError("bad reference")
        return RemoteObject(self, {"ref": {"id": payload["id"]}}, self.generation)

    def names(self) -> dict[str, Any]:
        """The candidate's top-level names: plain values as-is, the rest as RemoteObjects."""
        first = self._live().hello.get("names")  # answered with the hello when loaded
        raw = self._value(first) if first is not None else self.request(
            {"op": "names", "target": {}})
        if not isinstance(raw, dict):
            raise CandidateCrashed("names reply is not a dict")
        out: dict[str, Any] = {}
        for name, value in raw.items():
            if isinstance(name, str):
                remote = isinstance(value, RemoteObject)
                out[name] = RemoteObject(self, {"global": name}, None) if remote else value
        return out

    def close(self) -> list[Any]:
        """End the live session; returns every session's ExecResult."""
        if self.session is not None:
            self.results.append(self.session.close())
            self.session = None
        return self.results


def map_request(func: str, calls: list[bytes], last: bool = False) -> bytes:
    """A pipelined request calling candidate function `func` once per encoded call
    (`encode_call`'s), as the JSON message that goes on the wire. `last`: no request
    follows, so the child may end once it has answered (it stays when an answer is a
    reference the parent could still use)."""
    head = _wire.dumps({"op": "map", "target": {"global": func}, "last": last})
    return b"".join((head[:-1], b',"calls":[', b",".join(calls), b"]}"))


def encode_call(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes:
    """One call of a pipelined request, JSON-encoded: plain values only (WireError
    otherwise). Already encoded, so that a call whose arguments the tests fix is
    encoded once (tracerl.rewards.prepared)."""
    return _wire.dumps({"args": _wire.encode(args), "kwargs": _wire.encode(kwargs)})


def expression_call(source: str) -> bytes:
    """One call of a pipelined request whose arguments the child evaluates itself:
    `source` is an expression of (args tuple, kwargs dict) over literals and pure
    built-ins (tracerl.rewards.prepared decides when)."""
    return _wire.dumps({"expr": source})


def _arg(rpc: CandidateRPC, value: Any) -> Any:
    def to_ref(obj: Any) -> dict[str, Any]:
        if isinstance(obj, RemoteObject) and obj._rpc is rpc:
            return obj._target["ref"] if "ref" in obj._target else _no_global_ref()
        raise TypeError(f"cannot pass a {type(obj).__name__} to the candidate")

    return _wire.encode(value, to_ref)


def _no_global_ref() -> dict[str, Any]:
    raise TypeError("pass the result of a call, not a candidate global itself")


class RemoteObject:
    """A value that lives in the candidate process; every use is a sandboxed call."""

    __slots__ = ("_rpc", "_target", "_generation")

    def __init__(self, rpc: CandidateRPC, target: dict[str, Any], generation: int | None):
        self._rpc, self._target, self._generation = rpc, target, generation

    def _op(self, op: str, **fields: Any) -> Any:
        msg = {"op": op, "target": self._target, **fields}
        return self._rpc.request(msg, self._generation)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._op("call", args=_arg(self._rpc, args), kwargs=_arg(self._rpc, kwargs))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._op("getattr", arg=name)

    def __len__(self) -> int:
        n = self._op("len")
        if type(n) is not int:
            raise TypeError("len() of a candidate object did not return an int")
        return n

    def __iter__(self) -> Iterator[Any]:
        return iter(self._op("iter"))

    def __getitem__(self, key: Any) -> Any:
        return self._op("getitem", arg=_arg(self._rpc, key))

    def __contains__(self, item: Any) -> bool:
        return self._op("contains", arg=_arg(self._rpc, item)) is True

    def __bool__(self) -> bool:
        return self._op("bool") is True

    def __str__(self) -> str:
        text = self._op("str")
        return text if type(text) is str else "<candidate object>"

    def __repr__(self) -> str:  # local: used in assertion messages, must not call out
        return f"<candidate object {self._target}>"

"""Running a rollout coroutine from synchronous code, with Ctrl-C that always stops it.

Since Python 3.11 `asyncio.run` turns the first Ctrl-C into a cancellation of the main
task and raises KeyboardInterrupt only if that cancellation comes back out of it. A
cancellation can be swallowed on the way: in 3.11 `asyncio.wait_for` loses the outer
cancellation when its inner future completes at the same moment (fixed in 3.12), and a
rollout awaits tools under `wait_for` all the time. The interrupt is then lost and the
training run goes on as if nothing had happened (seen as a flaky Ctrl-C test under
load). `run_sync` keeps the older behaviour on the main thread: Ctrl-C raises
KeyboardInterrupt where the loop is, `asyncio.run` cancels what is left and closes the
loop, and the trainer's handler checkpoints and exits.

When the interrupt lands inside a task's step, the task keeps it as its exception too;
nobody retrieves it, so when the task is collected asyncio would print "Task exception
was never retrieved" and the interrupt's whole traceback under the trainer's one-line
message (a flaky Ctrl-C test again). The caller has already received that interrupt, so
the loop's exception handler drops reports of it and passes everything else on.

A Ctrl-C must not land while the loop is being made or closed: raised in the middle of
`loop.close()` (between closing its self-pipe socket and forgetting it) it leaves a
half-closed loop, whose `__del__` later prints a "Invalid file descriptor: -1" traceback
at exit (seen as a flaky Ctrl-C test: every synchronous rollout step makes and closes a
loop, so the signal often arrives there). The interrupt is therefore raised at once only
while the coroutine runs; one arriving outside that window is held and raised as soon as
the loop is closed.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _Gate:
    """The SIGINT handler of one `run_sync` call: raises while open, holds otherwise."""

    def __init__(self) -> None:
        self.open = False
        self.held = False

    def __call__(self, signum: int, frame: object) -> None:
        if self.open:
            raise KeyboardInterrupt
        self.held = True


def _drop_interrupts(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    if isinstance(context.get("exception"), KeyboardInterrupt):
        return  # raised to run_sync's caller already
    loop.default_exception_handler(context)


def _run(coro: Coroutine[Any, Any, T], gate: _Gate) -> T:
    with asyncio.Runner() as runner:
        runner.get_loop().set_exception_handler(_drop_interrupts)
        gate.open = True
        try:
            if gate.held:  # arrived while the loop was being made
                coro.close()
                raise KeyboardInterrupt
            return runner.run(coro)
        finally:
            gate.open = False


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, with Ctrl-C raising KeyboardInterrupt at once on the main
    thread (asyncio leaves a SIGINT handler other than Python's default alone)."""
    gate = _Gate()  # installed only where this call owns Ctrl-C; otherwise it never holds
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return _run(coro, gate)
    signal.signal(signal.SIGINT, gate)
    try:
        result = _run(coro, gate)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if gate.held:  # arrived while the loop was being closed: now it is closed
        raise KeyboardInterrupt
    return result

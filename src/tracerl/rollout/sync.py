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
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _drop_interrupts(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    if isinstance(context.get("exception"), KeyboardInterrupt):
        return  # raised to run_sync's caller already
    loop.default_exception_handler(context)


def _run(coro: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner() as runner:
        runner.get_loop().set_exception_handler(_drop_interrupts)
        return runner.run(coro)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, with Ctrl-C raising KeyboardInterrupt at once on the main
    thread (asyncio leaves a SIGINT handler other than Python's default alone)."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return _run(coro)
    signal.signal(signal.SIGINT, _interrupt)
    try:
        return _run(coro)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)

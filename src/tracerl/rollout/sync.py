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


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, with Ctrl-C raising KeyboardInterrupt at once on the main
    thread (asyncio leaves a SIGINT handler other than Python's default alone)."""
    main = threading.current_thread() is threading.main_thread()
    if not main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return asyncio.run(coro)
    signal.signal(signal.SIGINT, _interrupt)
    try:
        return asyncio.run(coro)
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)

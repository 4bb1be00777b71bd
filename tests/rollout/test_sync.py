"""Ctrl-C stops a rollout run from synchronous code even when a cancellation is lost on
the way (Python 3.11's asyncio.wait_for can swallow one)."""

import asyncio
import os
import signal
import threading

import pytest

from tracerl.rollout.sync import run_sync


async def _stubborn() -> str:
    """Swallows cancellation, as 3.11's wait_for does when its inner future completes at
    the moment the outer task is cancelled."""
    for _ in range(60):
        try:
            await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            pass
    return "finished"


def _interrupt_soon() -> None:
    threading.Timer(0.1, lambda: os.kill(os.getpid(), signal.SIGINT)).start()


@pytest.fixture(autouse=True)
def _python_ctrl_c():
    """Python's own SIGINT handler, as an interactive run has it (a suite started in the
    background inherits SIGINT ignored)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_asyncio_run_loses_the_interrupt_when_the_cancellation_is_swallowed():
    _interrupt_soon()
    assert asyncio.run(_stubborn()) == "finished"  # what made Ctrl-C flaky in training


def test_ctrl_c_raises_at_once_and_the_default_handler_comes_back():
    _interrupt_soon()
    with pytest.raises(KeyboardInterrupt):
        run_sync(_stubborn())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert run_sync(asyncio.sleep(0, result=7)) == 7


def test_off_the_main_thread_it_is_plain_asyncio_run():
    out = []
    worker = threading.Thread(target=lambda: out.append(run_sync(asyncio.sleep(0, result=3))))
    worker.start()
    worker.join()
    assert out == [3]


async def _interrupted_inside_a_task() -> None:
    async def step() -> None:
        await asyncio.sleep(0)
        raise KeyboardInterrupt  # where a Ctrl-C lands when it hits a task's step

    await asyncio.gather(step(), asyncio.sleep(1))


async def _leaves_a_failed_task() -> None:
    async def fail() -> None:
        raise ValueError("a real error nobody awaited")

    asyncio.get_running_loop().create_task(fail())
    await asyncio.sleep(0.01)


def test_an_interrupt_inside_a_task_is_raised_once_and_not_reported_again(caplog):
    import gc

    with pytest.raises(KeyboardInterrupt):
        run_sync(_interrupted_inside_a_task())
    gc.collect()
    assert "never retrieved" not in caplog.text  # its traceback under the trainer's message
    run_sync(_leaves_a_failed_task())
    gc.collect()
    assert "never retrieved" in caplog.text and "a real error nobody awaited" in caplog.text


async def _interrupted_while_the_loop_closes(loops: list) -> str:
    """Sends Ctrl-C from inside the loop's own close(), before it has closed anything."""
    loop = asyncio.get_running_loop()
    loops.append(loop)
    close = loop.close

    def close_under_ctrl_c() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # Python runs the handler between bytecodes, soon after
            pass
        close()

    loop.close = close_under_ctrl_c
    return "done"


def test_ctrl_c_while_the_loop_closes_is_raised_after_it_is_closed():
    """Raised mid-close it would leave a half-closed loop, whose __del__ prints an
    "Invalid file descriptor: -1" traceback at exit."""
    loops: list = []
    with pytest.raises(KeyboardInterrupt):
        run_sync(_interrupted_while_the_loop_closes(loops))
    assert loops[0].is_closed()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

"""run_sync: pyHanko's coroutines from synchronous code, on one kept loop per thread."""

from __future__ import annotations

import asyncio
import gc
import signal
import threading
import warnings

import pytest

from activities.signer.crypto._sync import run_sync


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_calls_on_one_thread_share_a_kept_loop_and_leave_sigint_alone(monkeypatch):
    # asyncio.run built a loop per signature and swapped SIGINT around it: a tenth of the
    # signing pool's CPU went to that and to a repr of the task it made on the way.
    swaps: list[object] = []
    monkeypatch.setattr(signal, "signal", lambda *args: swaps.append(args))

    first, second = run_sync(_running_loop()), run_sync(_running_loop())

    assert first is second and not first.is_closed()
    assert swaps == []


def test_each_thread_gets_its_own_loop():
    here = run_sync(_running_loop())
    there: list[asyncio.AbstractEventLoop] = []
    thread = threading.Thread(target=lambda: there.append(run_sync(_running_loop())))
    thread.start()
    thread.join()

    assert there and there[0] is not here


def test_a_closed_loop_is_replaced():
    run_sync(_running_loop()).close()

    assert not run_sync(_running_loop()).is_closed()


async def test_inside_a_running_loop_it_refuses_and_names_the_async_api():
    coroutine = _running_loop()
    with pytest.raises(RuntimeError, match="use the async_ variant"):
        run_sync(coroutine)
    assert coroutine.cr_frame is None  # closed: no "never awaited" warning


def test_an_exception_reaches_the_caller_and_the_loop_stays_usable():
    async def fails() -> None:
        raise ValueError("corrupt PDF")

    with pytest.raises(ValueError, match="corrupt PDF"):
        run_sync(fails())
    assert run_sync(_running_loop()) is run_sync(_running_loop())


def test_a_finished_threads_loop_is_closed_without_a_warning():
    loops: list[asyncio.AbstractEventLoop] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResourceWarning)
        thread = threading.Thread(target=lambda: loops.append(run_sync(_running_loop())))
        thread.start()
        thread.join()
        del thread
        gc.collect()

    assert loops[0].is_closed()


def test_a_task_a_call_left_running_is_cancelled_before_the_next_call():
    started: list[asyncio.Task] = []

    async def leaves_a_task() -> None:
        started.append(asyncio.get_running_loop().create_task(asyncio.sleep(3600)))

    run_sync(leaves_a_task())

    assert started[0].cancelled()

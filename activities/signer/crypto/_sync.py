"""Run pyHanko's coroutine APIs from synchronous code."""

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# One loop per thread of a process, kept between calls. asyncio.run built and closed a loop per
# signature and swapped the SIGINT handler around it; reading that handler back formats the
# running task's repr (Python's signal-enum lookup fails on a partial and builds its error
# message): about 2 ms of the 12 a 100 KB PDF's signature and verification cost.
_loops = threading.local()


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class _KeptLoop:
    """A thread's loop, closed when the thread's locals go (no "unclosed loop" warning)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.pid = os.getpid()

    def __del__(self) -> None:
        if not self.loop.is_closed():
            self.loop.close()


def _thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's kept loop; a new one in a forked child or after the old one was closed."""
    kept = getattr(_loops, "kept", None)
    if kept is None or kept.loop.is_closed() or kept.pid != os.getpid():
        kept = _loops.kept = _KeptLoop()
    return kept.loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion; refuse inside a running loop (use the async_ variant there)."""
    if _in_event_loop():
        coro.close()
        # run_until_complete would fail anyway; say which API to use instead (pyHanko#458).
        raise RuntimeError("sync signer API called inside an event loop; use the async_ variant")
    loop = _thread_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        _cancel_leftovers(loop)


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what a call left running, as asyncio.run does: nothing carries into the next."""
    leftovers = asyncio.all_tasks(loop)
    if not leftovers:
        return
    for task in leftovers:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))

"""Run pyHanko's coroutine APIs from synchronous code."""

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion; refuse inside a running loop (use the async_ variant there)."""
    if _in_event_loop():
        coro.close()
        # asyncio.run would fail anyway; say which API to use instead (pyHanko#458).
        raise RuntimeError("sync signer API called inside an event loop; use the async_ variant")
    return asyncio.run(coro)

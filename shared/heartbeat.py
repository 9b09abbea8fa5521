"""Activity heartbeats: one beat, a beat until cancelled, or a beat while a call runs."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import ParamSpec, TypeVar

from temporalio import activity

# Without a heartbeat timeout on the activity, a beat this often.
DEFAULT_EVERY_SECONDS = 5.0
P = ParamSpec("P")
R = TypeVar("R")


def beat(*details: object) -> None:
    """Heartbeat (with `details`) inside an activity; nothing elsewhere (tests, scripts)."""
    if activity.in_activity():
        activity.heartbeat(*details)


def beat_period() -> float:
    """A third of the running activity's heartbeat timeout (the default without one)."""
    timeout = activity.info().heartbeat_timeout
    # Three beats per timeout window: one lost beat never reads as a lost worker.
    return timeout.total_seconds() / 3 if timeout else DEFAULT_EVERY_SECONDS


async def heartbeat_forever(every: float | None = None) -> None:
    """Beat every `every` seconds (`beat_period()` by default) until cancelled."""
    if not activity.in_activity():
        return
    period = beat_period() if every is None else every
    while True:
        # The first beat waits too: most calls end before it, and each beat is a server write.
        await asyncio.sleep(period)
        activity.heartbeat()


def heartbeats(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """An activity that beats while it runs, so its heartbeat timeout sees a lost worker."""

    @functools.wraps(fn)
    async def beating(*args: P.args, **kwargs: P.kwargs) -> R:
        async with heartbeating():
            return await fn(*args, **kwargs)

    return beating


@contextlib.asynccontextmanager
async def heartbeating(every: float | None = None) -> AsyncIterator[None]:
    """Keep the activity alive while the body runs (a long upload, a ledger write)."""
    task = asyncio.create_task(heartbeat_forever(every))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

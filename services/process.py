"""What every long-running process shares: a stop event wired to SIGINT/SIGTERM, retries."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio.client import Client
from temporalio.runtime import Runtime

from shared.settings import Settings
from shared.temporal import connect, data_converter

T = TypeVar("T")
log = logging.getLogger("esteira.process")


def stop_event() -> asyncio.Event:
    """An event set by the first SIGINT or SIGTERM (call inside the running loop)."""
    event = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, event.set)
    return event


async def retry_until(what: str, attempt: Callable[[], Awaitable[T]], stop: asyncio.Event,
                      *, max_delay: float = 5.0) -> T | None:
    """Call `attempt` until it succeeds or `stop` is set; log each failure once per try."""
    delay = 0.2
    while not stop.is_set():
        try:
            return await attempt()
        except Exception as exc:
            log.warning("%s failed, retrying in %.1fs: %s", what, delay, exc)
        try:
            await asyncio.wait_for(stop.wait(), delay)
        except TimeoutError:
            delay = min(delay * 2, max_delay)
    return None


async def connect_when_available(settings: Settings, stop: asyncio.Event,
                                 runtime: Runtime | None = None) -> Client | None:
    """Connect to Temporal, waiting for it to come up (None if stopped first)."""
    data_converter(settings)  # a missing or bad payload key is fatal, not worth a retry
    return await retry_until(f"Connecting to Temporal at {settings.temporal_address}",
                             lambda: connect(settings, runtime=runtime), stop)

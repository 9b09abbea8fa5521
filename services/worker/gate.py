"""The pause gate: a worker that polls only while the durable pause row says running."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.worker import Worker

from activities.signer.models.pipeline import read_pipeline_state
from shared.instances import read_stood_down

log = logging.getLogger("esteira.worker.gate")


class PauseGatedWorker:
    """Starts the worker when the pipeline runs, shuts it down (draining) when it pauses.

    A paused queue has no poller at all, so thousands of waiting jobs cost no CPU; activities
    already running finish, because shutdown waits for them. With `instance` (cluster mode)
    an operator's stand-down of that instance closes the gate the same way; a queue that
    doesn't `follows_pause` (the signer's jobs queue) follows only the stand-down.
    """

    def __init__(self, make_worker: Callable[[], Worker],
                 sessions: async_sessionmaker[AsyncSession], poll_seconds: float,
                 on_read: Callable[[bool], None] | None = None, *,
                 instance: str | None = None, follows_pause: bool = True) -> None:
        self._make_worker = make_worker
        self._instance = instance
        self._follows_pause = follows_pause
        self.stood_down = False
        self._on_read = on_read
        self._sessions = sessions
        self._poll_seconds = poll_seconds
        self._worker: Worker | None = None
        self._running: asyncio.Task[None] | None = None
        self._draining = False
        # Completed reads of the pause row: two more than before a write means one read
        # began after it (the first may have been in flight while it was written).
        self.rounds = 0

    @property
    def polling(self) -> bool:
        """Whether the worker is polling for signing work."""
        return self._worker is not None

    @property
    def drained(self) -> bool:
        """Paused and done: no poller, and nothing a last poll handed over is still running."""
        return self._worker is None and not self._draining

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the pause row until `stop` is set, then drain."""
        try:
            while not stop.is_set():
                paused = await self._paused()
                self.rounds += 1
                await self._follow(paused)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self._poll_seconds)
        finally:
            await self._stop_worker()

    async def _paused(self) -> bool:
        try:
            async with self._sessions() as session:
                paused = self._follows_pause and (await read_pipeline_state(session)).paused
                stood_down = self._instance is not None \
                    and await read_stood_down(session, self._instance)
        except Exception as exc:
            # The store can't tell us: keep doing whatever we were doing.
            log.warning("Could not read the pause state: %s", exc)
            return self._worker is None
        if self._on_read is not None and self._follows_pause:
            self._on_read(paused)
        if stood_down != self.stood_down:
            log.warning("Instance %s %s", self._instance,
                        "stood down: no new claims; in-flight jobs finish" if stood_down
                        else "resumed: claiming jobs again")
        self.stood_down = stood_down
        return paused or stood_down

    async def _follow(self, paused: bool) -> None:
        if self._running is not None and self._running.done():
            error = self._running.exception()
            queue = self._worker.task_queue if self._worker is not None else "?"
            log.error("Worker of %s stopped unexpectedly: %r; restarting", queue, error)
            self._worker = self._running = None
        if paused and self._worker is not None:
            await self._stop_worker()
        elif not paused and self._worker is None:
            self._worker = self._make_worker()
            self._running = asyncio.create_task(self._worker.run())
            log.info("Polling %s", self._worker.task_queue)

    async def _stop_worker(self) -> None:
        if self._worker is None:
            return
        # A poll already open when the pause arrived may still hand over a task; shutdown
        # lets it run to the end, so `drained` waits for that too.
        worker, running = self._worker, self._running
        log.info("Stopped polling %s; what it holds finishes", worker.task_queue)
        self._worker = self._running = None
        self._draining = True
        try:
            await worker.shutdown()
            if running is not None:
                with contextlib.suppress(Exception):
                    await running
        finally:
            self._draining = False

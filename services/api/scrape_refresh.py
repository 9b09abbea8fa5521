"""Gauges `/api/metrics` reads from the store and Temporal at scrape time.

Workers and the watcher set some of these in their own processes; only `esteira dev` shares
those values with the API (one multiprocess folder). A standalone API (Compose, Kubernetes)
serves them from here instead. In the shared folder the gauges use a most-recent mode, so
this fresh reading of the store wins over an older one a worker wrote: no doubling.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta

from prometheus_client import Gauge

from services.app_context import ApiContext
from services.readiness.workers import live_pollers
from services.worker.domains import polled_queues
from shared.metrics import MULTIPROC_ENV, TASK_QUEUE_POLLERS

log = logging.getLogger("esteira.api.metrics")
# A scrape storm asks Temporal at most once per this; poller lists change slowly anyway.
POLLERS_CACHE_SECONDS = 5.0
POLLERS_TIMEOUT_SECONDS = 5.0


class ScrapeRefresher:
    """Sets the scrape-time gauges of one API process; each source fails on its own."""

    def __init__(self, context: ApiContext) -> None:
        self.context = context
        self._pollers_at = float("-inf")
        self._pollers_lock = asyncio.Lock()
        # Keyed by the gauge object itself: its name is a private attribute.
        self._published: dict[Gauge, set[tuple[str, ...]]] = {}

    async def refresh(self) -> None:
        """Refresh every gauge; a source that fails keeps its last values (logged)."""
        for source in (self._queue_depth, self._pipeline, self._folders, self._profiles,
                       self._archive,
                       self._sisbajud, self._pickup, self._pollers):
            await self._quietly(source)

    async def _quietly(self, source: Callable[[], Awaitable[None]]) -> None:
        try:
            await source()
        except Exception as exc:  # a scrape never fails on one source
            log.warning("Metrics source %s unavailable: %s", source.__name__, exc)

    async def _queue_depth(self) -> None:
        await self.context.faces.signer.gauges.queue_depth()

    async def _archive(self) -> None:
        await self.context.faces.signer.gauges.archive_expiry()

    async def _pipeline(self) -> None:
        await self.context.faces.signer.gauges.pipeline_paused()

    async def _folders(self) -> None:
        await self.context.faces.signer.gauges.folder_status(self._publish)

    async def _profiles(self) -> None:
        # The `signing-profile:<name>` lines of /api/ready, judged the same way.
        await self.context.faces.signer.gauges.profile_degraded(self._publish)

    async def _sisbajud(self) -> None:
        await self.context.faces.sisbajud.gauges.refresh(self._publish)

    async def _pickup(self) -> None:
        await self.context.faces.pickup.queues.publish_backlogs()

    async def _pollers(self) -> None:
        async with self._pollers_lock:
            if time.monotonic() - self._pollers_at < POLLERS_CACHE_SECONDS:
                return
            # A failed read is not retried before the cache expires either.
            self._pollers_at = time.monotonic()
            counts = await asyncio.wait_for(self._live_pollers(), POLLERS_TIMEOUT_SECONDS)
            self._publish(TASK_QUEUE_POLLERS, {(q,): float(n) for q, n in counts.items()})

    async def _live_pollers(self) -> dict[str, int]:
        settings = self.context.settings
        client = await self.context.temporal()
        stale = timedelta(seconds=settings.readiness.poller_stale_seconds)
        return {queue.name: len(await live_pollers(client, self.context.sessions,
                                                   queue.name, stale))
                for queue in polled_queues(settings)}

    def _publish(self, gauge: Gauge, values: dict[tuple[str, ...], float]) -> None:
        """Set each label set; one gone since the last scrape is dropped (0 when shared)."""
        for gone in self._published.get(gauge, set()) - values.keys():
            if os.environ.get(MULTIPROC_ENV):
                # A shared file keeps every series it ever held: leave it at 0, not its last.
                gauge.labels(*gone).set(0)
            else:
                gauge.remove(*gone)
        for labels, value in values.items():
            gauge.labels(*labels).set(value)
        self._published[gauge] = set(values)

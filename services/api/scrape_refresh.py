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
from sqlmodel import select

from activities.signer.operator.metrics import (
    FOLDER_STATUS,
    PIPELINE_PAUSED,
    PROFILE_DEGRADED,
    refresh_queue_depth,
)
from activities.sisbajud.operator.gauges import refresh_gauges as refresh_sisbajud
from services.app_context import ApiContext
from services.readiness.signer import NO_PROFILE, SignerProbes
from services.readiness.workers import live_pollers
from services.worker.domains import polled_queues
from shared.contracts.signer import FolderStatus
from shared.db.pipeline import read_pipeline_state
from shared.db.signer_models import InputFolderState
from shared.metrics import MULTIPROC_ENV, TASK_QUEUE_POLLERS
from shared.readiness import evaluate

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
        self._published: dict[str, set[tuple[str, ...]]] = {}

    async def refresh(self) -> None:
        """Refresh every gauge; a source that fails keeps its last values (logged)."""
        await refresh_queue_depth(self.context.sessions)
        for source in (self._pipeline, self._folders, self._profiles, self._sisbajud,
                       self._pickup, self._pollers):
            await self._quietly(source)

    async def _quietly(self, source: Callable[[], Awaitable[None]]) -> None:
        try:
            await source()
        except Exception as exc:  # a scrape never fails on one source
            log.warning("Metrics source %s unavailable: %s", source.__name__, exc)

    async def _pipeline(self) -> None:
        async with self.context.sessions() as session:
            paused = (await read_pipeline_state(session)).paused
        PIPELINE_PAUSED.set(1 if paused else 0)

    async def _folders(self) -> None:
        async with self.context.sessions() as session:
            rows = (await session.exec(select(InputFolderState))).all()
        self._publish(FOLDER_STATUS, {
            (row.name, each.value): 1.0 if row.status == each.value else 0.0
            for row in rows for each in FolderStatus})

    async def _profiles(self) -> None:
        # The `signing-profile:<name>` lines of /api/ready, judged the same way.
        probes = await SignerProbes(self.context.settings, self.context.sessions).probes()
        prefix = "signing-profile:"
        verdict = await evaluate([p for p in probes
                                  if p.name.startswith(prefix) and p.name != NO_PROFILE])
        self._publish(PROFILE_DEGRADED, {
            (check.name.removeprefix(prefix),): 0.0 if check.ok else 1.0
            for check in verdict.checks})

    async def _sisbajud(self) -> None:
        await refresh_sisbajud(self.context.sessions, self._publish)

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
        name = gauge._name  # type: ignore[attr-defined]
        for gone in self._published.get(name, set()) - values.keys():
            if os.environ.get(MULTIPROC_ENV):
                # A shared file keeps every series it ever held: leave it at 0, not its last.
                gauge.labels(*gone).set(0)
            else:
                gauge.remove(*gone)
        for labels, value in values.items():
            gauge.labels(*labels).set(value)
        self._published[name] = set(values)

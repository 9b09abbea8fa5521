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
from sqlalchemy import func
from sqlmodel import select

from activities.pickup import metrics as pickup_metrics
from activities.pickup.sweeps import queue_backlog
from services.api.context import ApiContext
from services.api.signer_probes import NO_PROFILE, SignerProbes, refresh_queue_depth
from services.watcher.state import FolderStatus
from services.worker.domains import polled_queues
from services.worker.readiness import live_pollers
from shared.contracts.sisbajud import HumanDisposition
from shared.db.models import as_utc, utcnow
from shared.db.pickup_models import LedgerEntry, Notification
from shared.db.pipeline import read_pipeline_state
from shared.db.signer_models import InputFolderState
from shared.db.sisbajud_models import (
    SisbajudHumanDecision,
    SisbajudOrphan,
    SisbajudOutbox,
    SisbajudWrite,
)
from shared.metrics import MULTIPROC_ENV, TASK_QUEUE_POLLERS
from shared.metrics_signer import FOLDER_STATUS, PIPELINE_PAUSED, PROFILE_DEGRADED
from shared.readiness import evaluate
from shared.sisbajud_metrics import (
    HUMAN_DECISIONS_OPEN,
    ORPHANS_OPEN,
    OUTBOX_AGE,
    OUTBOX_DEPTH,
    UNCERTAIN_WRITES,
)

log = logging.getLogger("esteira.api.metrics")
# A scrape storm asks Temporal at most once per this; poller lists change slowly anyway.
POLLERS_CACHE_SECONDS = 5.0
POLLERS_TIMEOUT_SECONDS = 5.0
UNCERTAIN_STATES = ("INDETERMINATE", "DEFERRED")
NO_DISPOSITION = "NONE"


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
        async with self.context.sessions() as session:
            uncertain = dict((await session.exec(
                select(SisbajudWrite.state, func.count())
                .where(SisbajudWrite.state.in_(UNCERTAIN_STATES))  # type: ignore[attr-defined]
                .group_by(SisbajudWrite.state))).all())
            depth, oldest = (await session.exec(
                select(func.count(), func.min(SisbajudOutbox.created_at))
                .where(SisbajudOutbox.state == "PENDING"))).one()
            orphans = (await session.exec(select(func.count())
                                          .select_from(SisbajudOrphan))).one()
            open_decisions = dict((await session.exec(
                select(SisbajudHumanDecision.disposition, func.count())
                .where(SisbajudHumanDecision.resolved_at.is_(None))  # type: ignore[union-attr]
                .group_by(SisbajudHumanDecision.disposition))).all())
        for state in UNCERTAIN_STATES:
            UNCERTAIN_WRITES.labels(state).set(uncertain.get(state, 0))
        OUTBOX_DEPTH.set(depth)
        OUTBOX_AGE.set(max(0.0, (utcnow() - as_utc(oldest)).total_seconds()) if oldest else 0)
        ORPHANS_OPEN.set(orphans)
        decisions = {(each.value,): 0.0 for each in HumanDisposition}
        decisions |= {(disposition or NO_DISPOSITION,): float(count)
                      for disposition, count in open_decisions.items()}
        self._publish(HUMAN_DECISIONS_OPEN, decisions)

    async def _pickup(self) -> None:
        now = utcnow()
        async with self.context.sessions() as session:
            backlogs = {queue: await queue_backlog(session, model)
                        for queue, model in (("ledger", LedgerEntry),
                                             ("notifications", Notification))}
        for queue, (pending, failed, oldest) in backlogs.items():
            age = max(0.0, (now - as_utc(oldest)).total_seconds()) if oldest else 0.0
            pickup_metrics.set_queue(queue, pending=pending, failed=failed, oldest_seconds=age)

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

"""The outbound queues (turnstile ledger, guardian notifications): backlogs, pages, history."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar

from sqlmodel import SQLModel, select

from activities.pickup import metrics
from activities.pickup.backlog import queue_backlog
from activities.pickup.models import LedgerEntry, Notification, QueueSnapshot
from activities.pickup.queue_chart import Point, queue_svg
from shared.db.engine import Sessions
from shared.db.models import as_utc, utcnow
from shared.paging import Page, after, bounded, page_of

Row = TypeVar("Row", bound=SQLModel)
OUTBOXES: dict[str, type[SQLModel]] = {"ledger": LedgerEntry, "notifications": Notification}
# The status page's chart spans this much history.
PERIOD = timedelta(hours=24)


@dataclass(frozen=True)
class Backlog:
    """One outbox's pending and refused commands, and how long the oldest has waited."""

    pending: int
    failed: int
    oldest_pending_seconds: float


def backlog_at(pending: int, failed: int, oldest: datetime | None, now: datetime) -> Backlog:
    """A queue's backlog as seen at `now` (the oldest pending one's age never below 0)."""
    age = max(0.0, (now - as_utc(oldest)).total_seconds()) if oldest else 0.0
    return Backlog(pending=pending, failed=failed, oldest_pending_seconds=age)


@dataclass(frozen=True)
class OutboxPage(Generic[Row]):
    """A page of an outbox in id order, with the outbox's totals read with it at `read_at`."""

    page: Page[Row]
    backlog: Backlog
    read_at: datetime


async def outbox_page(sessions: Sessions, model: type[Row], query: Any, *, limit: int,
                      cursor: str | None) -> OutboxPage[Row]:
    """`query`'s page after `cursor` (oldest first) and the outbox's backlog, one session."""
    limit = bounded(limit)
    query = after(query, [model.id], cursor, kinds=[int], descending=False)
    now = utcnow()
    async with sessions() as session:
        rows = list((await session.exec(query.limit(limit + 1))).all())
        backlog = backlog_at(*await queue_backlog(session, model), now)
    return OutboxPage(page_of(rows, limit, lambda row: (row.id,)), backlog, now)


class OutboundQueues:
    """Both outboxes at once: the gauges a scrape sets, the status page's 24-hour charts."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def publish_backlogs(self) -> None:
        """Set the outbox gauges from the store (the API does it at scrape time)."""
        now = utcnow()
        async with self._sessions() as session:
            backlogs = {queue: await queue_backlog(session, model)
                        for queue, model in OUTBOXES.items()}
        for queue, (pending, failed, oldest) in backlogs.items():
            current = backlog_at(pending, failed, oldest, now)
            metrics.set_queue(queue, pending=current.pending, failed=current.failed,
                              oldest_seconds=current.oldest_pending_seconds)

    async def charts(self, *, now: datetime) -> list[tuple[str, str]]:
        """(queue, SVG) of each outbound queue over the last 24 hours of snapshots."""
        since = now - PERIOD
        async with self._sessions() as session:
            rows = (await session.exec(select(QueueSnapshot).where(QueueSnapshot.at >= since)
                                       .order_by(QueueSnapshot.at, QueueSnapshot.id))).all()
        series: dict[str, list[Point]] = {queue: [] for queue in OUTBOXES}
        for row in rows:
            series.setdefault(row.queue, []).append(Point(as_utc(row.at), row.pending,
                                                          row.failed))
        return [(queue, queue_svg(queue, points, since=since, until=now))
                for queue, points in series.items()]

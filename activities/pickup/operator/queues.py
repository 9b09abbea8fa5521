"""The outbound queues' recent history, as the dashboard's status page draws it."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.models import QueueSnapshot
from activities.pickup.queue_chart import Point, queue_svg
from shared.db.models import as_utc

Sessions = async_sessionmaker[AsyncSession]
QUEUES = ("ledger", "notifications")
PERIOD = timedelta(hours=24)


async def queue_charts(sessions: Sessions, *, now: datetime) -> list[tuple[str, str]]:
    """(queue, SVG) of each outbound queue over the last 24 hours of snapshots."""
    since = now - PERIOD
    async with sessions() as session:
        rows = (await session.exec(select(QueueSnapshot).where(QueueSnapshot.at >= since)
                                   .order_by(QueueSnapshot.at, QueueSnapshot.id))).all()
    series: dict[str, list[Point]] = {queue: [] for queue in QUEUES}
    for row in rows:
        series.setdefault(row.queue, []).append(Point(as_utc(row.at), row.pending, row.failed))
    return [(queue, queue_svg(queue, points, since=since, until=now))
            for queue, points in series.items()]

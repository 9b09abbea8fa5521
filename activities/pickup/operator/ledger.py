"""The outbound ledger as an operator sees it: entries, the backlog, a refused command's retry."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import metrics
from activities.pickup.backlog import queue_backlog
from activities.pickup.contracts.board import LedgerStatus, PickupErrorCode
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.models import LedgerEntry, Notification
from activities.pickup.records import audit
from shared.db.models import as_utc, utcnow

Sessions = async_sessionmaker[AsyncSession]
OUTBOXES = (("ledger", LedgerEntry), ("notifications", Notification))


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


async def ledger_backlog(sessions: Sessions) -> Backlog:
    """The turnstile ledger's backlog."""
    async with sessions() as session:
        return backlog_at(*await queue_backlog(session, LedgerEntry), utcnow())


async def ledger_entries(sessions: Sessions, *, status: LedgerStatus | None,
                         controller: int | None, limit: int
                         ) -> tuple[list[LedgerEntry], Backlog]:
    """Entries in id order (filtered), with the ledger's backlog read in the same session."""
    query = select(LedgerEntry).order_by(LedgerEntry.id).limit(limit)
    if status is not None:
        query = query.where(LedgerEntry.status == status)
    if controller is not None:
        query = query.where(LedgerEntry.controller == controller)
    now = utcnow()
    async with sessions() as session:
        entries = list((await session.exec(query)).all())
        backlog = backlog_at(*await queue_backlog(session, LedgerEntry), now)
    return entries, backlog


async def retry_entry(sessions: Sessions, kicker: Kicker, *, entry_id: int, actor: str) -> None:
    """Put a refused (failed) command back in the queue and wake its controller's drain."""
    async with sessions() as session, session.begin():
        entry = await session.get(LedgerEntry, entry_id)
        if entry is None:
            raise not_found("Ledger entry", entry_id)
        result = await session.exec(update(LedgerEntry).where(
            LedgerEntry.id == entry_id, LedgerEntry.status == LedgerStatus.FAILED,
        ).values(status=LedgerStatus.PENDING))
        if result.rowcount != 1:
            raise pickup_error(PickupErrorCode.LEDGER_NOT_FAILED,
                               f"Ledger entry {entry_id} is {entry.status}.")
        audit(session, entity="ledger", entity_id=entry_id, action="retry", actor=actor,
              at=utcnow(), school_id=entry.controller, from_state=LedgerStatus.FAILED,
              to_state=LedgerStatus.PENDING)
    await kicker.drains([entry.controller])


async def publish_backlogs(sessions: Sessions) -> None:
    """Set the outbox gauges from the store (the API does it at scrape time)."""
    now = utcnow()
    async with sessions() as session:
        backlogs = {queue: await queue_backlog(session, model) for queue, model in OUTBOXES}
    for queue, (pending, failed, oldest) in backlogs.items():
        current = backlog_at(pending, failed, oldest, now)
        metrics.set_queue(queue, pending=current.pending, failed=current.failed,
                          oldest_seconds=current.oldest_pending_seconds)

"""The outbound ledger as an operator sees it: entries, the backlog, a refused command's retry."""

from __future__ import annotations

from sqlmodel import select, update

from activities.pickup.backlog import queue_backlog
from activities.pickup.contracts.board import LedgerStatus, PickupErrorCode
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.models import LedgerEntry
from activities.pickup.operator.queues import Backlog, OutboxPage, backlog_at, outbox_page
from activities.pickup.records import audit
from shared.db.engine import Sessions
from shared.db.models import utcnow


class OutboundLedger:
    """Turnstile commands waiting for (or refused by) their controller."""

    def __init__(self, sessions: Sessions, kicker: Kicker) -> None:
        self._sessions = sessions
        self._kicker = kicker

    async def backlog(self) -> Backlog:
        """The turnstile ledger's backlog."""
        async with self._sessions() as session:
            return backlog_at(*await queue_backlog(session, LedgerEntry), utcnow())

    async def entries(self, *, status: LedgerStatus | None = None,
                      controller: int | None = None, limit: int = 100,
                      cursor: str | None = None) -> OutboxPage[LedgerEntry]:
        """Entries in id order (filtered), with the ledger's backlog read in the same
        session."""
        query = select(LedgerEntry)
        if status is not None:
            query = query.where(LedgerEntry.status == status)
        if controller is not None:
            query = query.where(LedgerEntry.controller == controller)
        return await outbox_page(self._sessions, LedgerEntry, query, limit=limit,
                                 cursor=cursor)

    async def retry(self, *, entry_id: int, actor: str) -> LedgerEntry:
        """Put a refused (failed) command back in the queue and wake its controller's drain."""
        async with self._sessions() as session, session.begin():
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
            await session.refresh(entry)
        await self._kicker.drains([entry.controller])
        return entry

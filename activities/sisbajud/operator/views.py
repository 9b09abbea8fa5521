"""What the operator reads: orders, notices, alarms, the outbox, orphans, institutions; every
list newest first in keyset pages (`limit`, `cursor`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func
from sqlmodel import col, select

from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudInstitution,
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
    SisbajudWrite,
)
from shared.db.engine import Sessions
from shared.db.models import as_utc, utcnow
from shared.errors import ErrorCode, EsteiraError
from shared.paging import Page, after, bounded, decode_cursor, page_of
from shared.settings import Settings

PENDING = "PENDING"


@dataclass(frozen=True)
class OrderDetail:
    """One order with its ledger writes (oldest first) and the results it queued."""

    order: SisbajudOrder
    writes: list[SisbajudWrite]
    results: list[SisbajudOutbox]


@dataclass(frozen=True)
class OutboxView:
    """What waits to be sent (`depth`, the oldest's age), results by state, and a page of
    the rows themselves (`next_cursor` continues it)."""

    depth: int
    oldest_age_seconds: float
    counts: dict[str, int]
    items: list[SisbajudOutbox]
    next_cursor: str | None


@dataclass(frozen=True)
class Institution:
    """A configured or recorded institution, its owner, and whether that is this executor."""

    institution_id: str
    configured: bool
    owner_subject: str | None
    owned_by_this_executor: bool
    created_at: datetime | None
    crm_mode: str | None
    organization_id: str | None
    ledger_id: str | None


@dataclass(frozen=True)
class InstitutionsView:
    """This executor's M2M subject and a page of institutions, in id order."""

    m2m_subject: str
    items: list[Institution]
    next_cursor: str | None


class Views:
    """The operator's reads of the store (and of the configured institutions)."""

    def __init__(self, settings: Settings, sessions: Sessions) -> None:
        self._settings = settings
        self._sessions = sessions

    async def orders(self, state: str | None, limit: int,
                     cursor: str | None = None) -> Page[SisbajudOrder]:
        """Orders with state, effect and reason, most recently changed first."""
        limit = bounded(limit)
        statement = after(select(SisbajudOrder),
                          [col(SisbajudOrder.updated_at), col(SisbajudOrder.order_id)],
                          cursor, kinds=(datetime, str)).limit(limit + 1)
        if state:
            statement = statement.where(SisbajudOrder.state == state.upper())
        rows = await self._all(statement)
        return page_of(rows, limit, lambda row: (row.updated_at, row.order_id))

    async def order(self, order_id: str) -> OrderDetail:
        """One order with its ledger writes and the results it queued."""
        async with self._sessions() as session:
            order = await session.get(SisbajudOrder, order_id)
            if order is None:
                raise EsteiraError(ErrorCode.NOT_FOUND, f"No order {order_id}.")
            writes = (await session.exec(select(SisbajudWrite).where(
                SisbajudWrite.order_id == order_id).order_by(
                col(SisbajudWrite.created_at)))).all()
            results = (await session.exec(select(SisbajudOutbox).where(
                SisbajudOutbox.order_id == order_id).order_by(col(SisbajudOutbox.id)))).all()
        return OrderDetail(order, list(writes), list(results))

    async def notices(self, state: str | None, limit: int,
                      cursor: str | None = None) -> Page[SisbajudNotice]:
        """Recorded deliveries, newest first; `state=PARKED` lists the parked ones."""
        limit = bounded(limit)
        statement = after(select(SisbajudNotice), [col(SisbajudNotice.id)], cursor,
                          kinds=(int,)).limit(limit + 1)
        if state:
            statement = statement.where(SisbajudNotice.state == state.upper())
        return page_of(await self._all(statement), limit, lambda row: (row.id,))

    async def alarms(self, code: str | None, limit: int,
                     cursor: str | None = None) -> Page[SisbajudAlarm]:
        """Alarms, newest first."""
        limit = bounded(limit)
        statement = after(select(SisbajudAlarm), [col(SisbajudAlarm.id)], cursor,
                          kinds=(int,)).limit(limit + 1)
        if code:
            statement = statement.where(SisbajudAlarm.code == code)
        return page_of(await self._all(statement), limit, lambda row: (row.id,))

    async def orphans(self, block_alias: str | None, limit: int,
                      cursor: str | None = None) -> Page[SisbajudOrphan]:
        """Operations on block accounts this executor did not write, newest first."""
        limit = bounded(limit)
        statement = after(select(SisbajudOrphan),
                          [col(SisbajudOrphan.found_at), col(SisbajudOrphan.operation_id)],
                          cursor, kinds=(datetime, str)).limit(limit + 1)
        if block_alias:
            statement = statement.where(SisbajudOrphan.block_alias == block_alias)
        rows = await self._all(statement)
        return page_of(rows, limit, lambda row: (row.found_at, row.operation_id))

    async def outbox(self, state: str | None, limit: int,
                     cursor: str | None = None) -> OutboxView:
        """Depth and age of what waits to be sent, and the rows themselves."""
        limit = bounded(limit)
        statement = after(select(SisbajudOutbox), [col(SisbajudOutbox.id)], cursor,
                          kinds=(int,)).limit(limit + 1)
        if state:
            statement = statement.where(SisbajudOutbox.state == state.upper())
        async with self._sessions() as session:
            counts = dict((await session.exec(select(SisbajudOutbox.state, func.count())
                                              .group_by(col(SisbajudOutbox.state)))).all())
            oldest: datetime | None = (await session.exec(
                select(func.min(SisbajudOutbox.created_at))
                .where(SisbajudOutbox.state == PENDING))).one()
            rows = (await session.exec(statement)).all()
        age = (utcnow() - as_utc(oldest)).total_seconds() if oldest else 0.0
        page = page_of(rows, limit, lambda row: (row.id,))
        return OutboxView(counts.get(PENDING, 0), age, counts, page.items, page.next_cursor)

    async def institutions(self, limit: int, cursor: str | None = None) -> InstitutionsView:
        """Configured and recorded institutions, with their owner and whether it is us."""
        limit = bounded(limit)
        subject = self._settings.sisbajud.m2m_subject
        stored = {i.institution_id: i for i in await self._all(select(SisbajudInstitution))}
        configured = {i.id: i for i in self._settings.sisbajud.institutions}
        ids = sorted(stored.keys() | configured.keys())
        if cursor:
            (last,) = decode_cursor(cursor, str)
            ids = [i for i in ids if i > last]
        items = []
        for institution_id in ids[:limit + 1]:
            row, config = stored.get(institution_id), configured.get(institution_id)
            items.append(Institution(
                institution_id=institution_id, configured=config is not None,
                owner_subject=row.owner_subject if row else None,
                owned_by_this_executor=row is not None and row.owner_subject == subject,
                created_at=row.created_at if row else None,
                crm_mode=config.crm_mode if config else None,
                organization_id=config.organization_id if config else None,
                ledger_id=config.ledger_id if config else None))
        page = page_of(items, limit, lambda i: (i.institution_id,))
        return InstitutionsView(subject, page.items, page.next_cursor)

    async def _all(self, statement: Any) -> list[Any]:
        async with self._sessions() as session:
            return list((await session.exec(statement)).all())

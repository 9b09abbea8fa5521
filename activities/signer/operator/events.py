"""The operational events trail, filtered, newest first."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, or_
from sqlmodel import select

from shared.db.engine import Sessions
from shared.db.models import OperationalEvent
from shared.paging import Page, after, bounded, page_of


@dataclass(frozen=True)
class EventFilter:
    """What a list of events narrows by (all optional)."""

    types: list[str] = field(default_factory=list)
    created_from: datetime | None = None
    created_to: datetime | None = None
    text: str | None = None


class SignerEvents:
    """The operational events trail (pause, profile edits, approvals, deletions, …)."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def known_types(self) -> list[str]:
        """Every event type the trail holds, sorted (a filter's choices)."""
        async with self._sessions() as session:
            return sorted(set((await session.exec(select(OperationalEvent.type))).all()))

    async def page(self, filters: EventFilter, *, limit: int = 100,
                   cursor: str | None = None) -> Page[OperationalEvent]:
        """Events matching `filters`, newest first, a page at a time."""
        limit = bounded(limit)
        query = select(OperationalEvent)
        if filters.types:
            query = query.where(OperationalEvent.type.in_(filters.types))
        if filters.created_from:
            query = query.where(OperationalEvent.at >= filters.created_from)
        if filters.created_to:
            query = query.where(OperationalEvent.at < filters.created_to)
        if filters.text:
            needle = filters.text.lower()
            query = query.where(or_(func.lower(OperationalEvent.message).contains(needle),
                                    func.lower(OperationalEvent.actor).contains(needle)))
        query = after(query, (OperationalEvent.at, OperationalEvent.id), cursor,
                      kinds=(datetime, int))
        async with self._sessions() as session:
            rows = list((await session.exec(query.limit(limit + 1))).all())
        return page_of(rows, limit, lambda row: (row.at, row.id or 0))

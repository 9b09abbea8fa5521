"""The operational events trail, filtered, newest first."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, or_
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.models import OperationalEvent


@dataclass(frozen=True)
class EventFilter:
    """What `GET /api/events` narrows by (all optional)."""

    types: list[str] = field(default_factory=list)
    created_from: datetime | None = None
    created_to: datetime | None = None
    text: str | None = None


async def known_types(sessions: async_sessionmaker[AsyncSession]) -> list[str]:
    """Every event type the trail holds, sorted (the filter's choices)."""
    async with sessions() as session:
        return sorted(set((await session.exec(select(OperationalEvent.type))).all()))


async def list_events(sessions: async_sessionmaker[AsyncSession], filters: EventFilter, *,
                      limit: int) -> list[OperationalEvent]:
    """At most `limit` events matching `filters`, newest first."""
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
    query = query.order_by(OperationalEvent.at.desc(), OperationalEvent.id.desc()).limit(limit)
    async with sessions() as session:
        return list((await session.exec(query)).all())

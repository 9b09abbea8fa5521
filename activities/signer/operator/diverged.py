"""Inputs that changed mid-job (`InputDiverged` events), for the watcher to take back."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.models import OperationalEvent


async def last_event_id(sessions: async_sessionmaker[AsyncSession]) -> int:
    """The newest event's id (0 with none): diverged inputs are read from after it."""
    async with sessions() as session:
        return (await session.exec(select(OperationalEvent.id).order_by(
            OperationalEvent.id.desc()).limit(1))).first() or 0


async def diverged_since(sessions: async_sessionmaker[AsyncSession],
                         cursor: int) -> list[OperationalEvent]:
    """`InputDiverged` events after `cursor`, oldest first."""
    async with sessions() as session:
        return list((await session.exec(select(OperationalEvent).where(
            OperationalEvent.id > cursor, OperationalEvent.type == "InputDiverged")
            .order_by(OperationalEvent.id))).all())

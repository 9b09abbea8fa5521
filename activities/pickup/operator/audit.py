"""The pickup audit trail, newest first."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.models import AuditEntry


async def audit_trail(sessions: async_sessionmaker[AsyncSession], *, entity: str | None,
                      entity_id: int | None, limit: int,
                      school_id: int | None = None) -> list[AuditEntry]:
    """Audit rows, newest first, optionally of one entity or one school."""
    query = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit)
    if school_id is not None:
        query = query.where(AuditEntry.school_id == school_id)
    if entity:
        query = query.where(AuditEntry.entity == entity)
    if entity_id is not None:
        query = query.where(AuditEntry.entity_id == entity_id)
    async with sessions() as session:
        return list((await session.exec(query)).all())

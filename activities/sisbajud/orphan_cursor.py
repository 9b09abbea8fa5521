"""Which block accounts the orphan check reads, and the row that remembers its failures."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.models import SisbajudOrphanScan, SisbajudWrite
from shared.db.models import as_utc, utcnow

Account = tuple[str, str]  # (institution id, block alias)


async def load(sessions: async_sessionmaker[AsyncSession]) -> SisbajudOrphanScan:
    """The cursor row (a fresh one before the first scan)."""
    async with sessions() as session:
        row = await session.get(SisbajudOrphanScan, 1)
    if row is None:
        return SisbajudOrphanScan()
    for name in ("recent_until", "failing_since"):
        value = getattr(row, name)
        setattr(row, name, as_utc(value) if value is not None else None)
    return row


async def save(sessions: async_sessionmaker[AsyncSession], **values: object) -> None:
    """Update the cursor row (creating it on the first scan)."""
    async with sessions() as session:
        row = await session.get(SisbajudOrphanScan, 1) or SisbajudOrphanScan()
        for name, value in values.items():
            setattr(row, name, value)
        row.updated_at = utcnow()
        session.add(row)
        await session.commit()


async def written_since(sessions: async_sessionmaker[AsyncSession],
                        since: datetime) -> list[Account]:
    """Block accounts this executor wrote to (block or unblock) since `since`."""
    async with sessions() as session:
        return list((await session.exec(
            select(SisbajudWrite.institution_id, SisbajudWrite.block_alias)
            .where(SisbajudWrite.updated_at >= since).distinct())).all())


async def every_account(sessions: async_sessionmaker[AsyncSession]) -> list[Account]:
    """Every block account ever written (the full scan)."""
    async with sessions() as session:
        return list((await session.exec(
            select(SisbajudWrite.institution_id, SisbajudWrite.block_alias)
            .where(SisbajudWrite.kind == "block").distinct())).all())

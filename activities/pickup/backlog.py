"""The backlog of an outbox table (ledger or notifications): what waits, what was refused."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import LedgerStatus


async def queue_backlog(session: AsyncSession, model) -> tuple[int, int, datetime | None]:
    """(pending, failed, oldest pending created_at) of an outbox table."""
    pending, oldest = (await session.exec(
        select(func.count(), func.min(model.created_at))
        .where(model.status == LedgerStatus.PENDING))).one()
    failed = (await session.exec(select(func.count()).where(
        model.status == LedgerStatus.FAILED))).one()
    return pending, failed, oldest

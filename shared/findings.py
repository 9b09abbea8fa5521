"""Record and read worker findings: the API shows what a worker saw, it never looks itself."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.finding_models import WorkerFinding
from shared.db.models import utcnow


async def record_finding(sessions: async_sessionmaker[AsyncSession], key: str, *, ok: bool,
                         detail: str, reporter: str, subject: str = "") -> None:
    """Replace the finding under `key`."""
    async with sessions() as session:
        row = await session.get(WorkerFinding, key) or WorkerFinding(key=key)
        row.ok, row.detail, row.subject, row.reporter = ok, detail, subject, reporter
        row.checked_at = utcnow()
        session.add(row)
        await session.commit()


async def read_findings(sessions: async_sessionmaker[AsyncSession], keys: Iterable[str]
                        ) -> dict[str, WorkerFinding]:
    """The findings under `keys` that exist."""
    wanted = list(keys)
    if not wanted:
        return {}
    async with sessions() as session:
        rows = (await session.exec(select(WorkerFinding).where(
            col(WorkerFinding.key).in_(wanted)))).all()
    return {row.key: row for row in rows}

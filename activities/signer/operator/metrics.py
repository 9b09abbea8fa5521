"""The signer gauges doors set (the API at scrape time, the watcher, the pause gate)."""

from __future__ import annotations

from datetime import UTC

from sqlalchemy import func
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.metrics import (
    ARCHIVE_OLDEST_EXPIRY,
    FOLDER_STATUS,
    PIPELINE_PAUSED,
    PROFILE_DEGRADED,
    QUEUE_DEPTH,
)
from shared.contracts.signer import JobStatus
from shared.db.signer_models import ArchivedOutput, Job

__all__ = ["FOLDER_STATUS", "PIPELINE_PAUSED", "PROFILE_DEGRADED", "refresh_archive_expiry",
           "refresh_queue_depth"]
WAITING = (JobStatus.QUEUED, JobStatus.AWAITING_APPROVAL, JobStatus.AWAITING_SIGNER,
           JobStatus.PROCESSING, JobStatus.VERIFYING)


async def refresh_queue_depth(sessions: async_sessionmaker[AsyncSession]) -> None:
    """Set `bulksigner_queue_depth{status}` from the store (a scrape never fails on it)."""
    waiting = [status.value for status in WAITING]
    try:
        async with sessions() as session:
            counts = dict((await session.exec(
                select(Job.status, func.count()).where(Job.status.in_(waiting))
                .group_by(Job.status))).all())
    except Exception:
        return
    for status in waiting:
        QUEUE_DEPTH.labels(status=status).set(counts.get(status, 0))


async def refresh_archive_expiry(sessions: async_sessionmaker[AsyncSession]) -> None:
    """Set the archive's oldest TSA expiry (0 when nothing is archived)."""
    async with sessions() as session:
        oldest = (await session.exec(select(func.min(ArchivedOutput.tsa_expires_at)))).first()
    if oldest is not None and oldest.tzinfo is None:
        oldest = oldest.replace(tzinfo=UTC)  # SQLite hands back naive UTC
    ARCHIVE_OLDEST_EXPIRY.set(oldest.timestamp() if oldest is not None else 0)

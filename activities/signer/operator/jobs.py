"""Listing and reading jobs: filters, cursor pagination, the detail with its history."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, tuple_
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.operator.errors import refuse
from shared.contracts.signer import SignerErrorCode
from shared.db.models import as_utc
from shared.db.signer_models import Job, JobHistory
from shared.errors import ErrorCode, EsteiraError

MAX_PAGE = 500


@dataclass(frozen=True)
class JobFilter:
    """What `GET /api/jobs` narrows by."""

    statuses: list[str] = field(default_factory=list)
    profile: str | None = None
    folder: str | None = None
    text: str | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None


async def list_jobs(sessions: async_sessionmaker[AsyncSession], filters: JobFilter, *,
                    limit: int = 50, cursor: str | None = None) -> tuple[list[Job], str | None]:
    """Newest first; the cursor continues after the last row of the previous page."""
    limit = max(1, min(limit, MAX_PAGE))
    query = select(Job)
    if filters.statuses:
        query = query.where(Job.status.in_(filters.statuses))
    if filters.profile:
        query = query.where(Job.profile_name == filters.profile)
    if filters.folder:
        query = query.where(Job.folder == filters.folder)
    if filters.text:
        query = query.where(func.lower(Job.file_name).contains(filters.text.lower()))
    if filters.created_from:
        query = query.where(Job.created_at >= filters.created_from)
    if filters.created_to:
        query = query.where(Job.created_at < filters.created_to)
    if cursor:
        # Keyset pagination: a row-value comparison the (status, created_at, id) index answers
        # as a range, so page 1,000 costs what page 1 does.
        query = query.where(tuple_(Job.created_at, Job.id) < _decode(cursor))
    query = query.order_by(Job.created_at.desc(), Job.id.desc()).limit(limit + 1)
    async with sessions() as session:
        rows = list((await session.exec(query)).all())
    next_cursor = _encode(rows[limit - 1]) if len(rows) > limit else None
    return rows[:limit], next_cursor


@dataclass(frozen=True)
class JobDetail:
    """A job with its timeline, parent and children."""

    job: Job
    history: list[JobHistory]
    children: list[str]


async def job_detail(sessions: async_sessionmaker[AsyncSession], job_id: str) -> JobDetail:
    """One job, or job.not-found."""
    async with sessions() as session:
        job = await session.get(Job, job_id)
        if job is None:
            raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
        history = list((await session.exec(select(JobHistory).where(
            JobHistory.job_id == job_id).order_by(JobHistory.id))).all())
        children = list((await session.exec(select(Job.id).where(
            Job.parent_job_id == job_id).order_by(Job.created_at))).all())
    return JobDetail(job, history, children)


async def status_counts(sessions: async_sessionmaker[AsyncSession]) -> dict[str, int]:
    """How many jobs are in each status (statuses with none are absent)."""
    async with sessions() as session:
        return dict((await session.exec(select(Job.status, func.count())
                                        .group_by(Job.status))).all())


def _encode(job: Job) -> str:
    raw = f"{as_utc(job.created_at).isoformat()}|{job.id}"
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _decode(cursor: str) -> tuple[datetime, str]:
    try:
        created, job_id = base64.urlsafe_b64decode(cursor.encode()).decode().split("|", 1)
        return datetime.fromisoformat(created), job_id
    except (ValueError, UnicodeDecodeError):
        raise EsteiraError(ErrorCode.REQUEST_INVALID, "The cursor is not valid.") from None

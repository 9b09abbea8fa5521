"""Job rows and their history: every transition a conditional update on the expected state."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import ColumnElement, exists, func, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.contracts.signer import ACTIVE_STATUSES, JobStatus
from shared.db.models import OperationalEvent, PipelineState, utcnow
from shared.db.signer_approval_models import JobApproval
from shared.db.signer_models import Job, JobHistory, SigningProfile


class AlreadyActiveError(Exception):
    """Another active job holds this original path (the unique partial index said so)."""


class Claim(StrEnum):
    """How a claim (Queued -> Processing) ended."""

    CLAIMED = "claimed"
    # Still Queued: the pipeline is paused (or was, when the claim was written).
    PAUSED = "paused"
    # No longer Queued (canceled, cleared, or claimed by another attempt).
    NOT_QUEUED = "not-queued"


@dataclass(frozen=True)
class LoadedJob:
    """A job row with its approval row and its profile row (None where there is none)."""

    job: Job
    approval: JobApproval | None
    profile: SigningProfile | None


# The statuses in which a job holds its file name against a new drop of the same name.
_NAME_HOLDERS = (JobStatus.COMPLETED.value, *(s.value for s in ACTIVE_STATUSES))


def new_job_id() -> str:
    """A new job id (UUID4 text)."""
    return str(uuid.uuid4())


def _not_paused(dialect: str) -> ColumnElement[bool]:
    """The claim's pause condition, evaluated inside the claim's own UPDATE."""
    if dialect == "postgresql":
        # The pause row is read under a share lock in the same statement (no extra round
        # trip): a pause that commits while this claim is open waits for it, and a claim that
        # waited on a pause reads the committed row. Once the pause is answered, every claim
        # either committed before it or sees it.
        paused = (select(PipelineState.paused).where(PipelineState.id == 1)
                  .with_for_update(read=True).scalar_subquery())
        return paused.is_not(True)
    return ~exists().where(PipelineState.paused)


class JobRepository:
    """Reads and conditional writes of `jobs` + `job_history`."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions

    async def insert(self, job: Job, message: str, *, code: str | None = None,
                     event: OperationalEvent | None = None) -> Job:
        """Insert a job with its first history row; AlreadyActiveError on the index."""
        async with self.sessions() as session:
            session.add(job)
            session.add(JobHistory(job_id=job.id, to_status=job.status, code=code,
                                   message=message))
            if event is not None:
                session.add(event)
            try:
                await session.commit()
            except IntegrityError as exc:
                await session.rollback()
                if "ux_jobs_active_original_path" in str(exc) or "original_path" in str(exc):
                    raise AlreadyActiveError(job.original_path) from None
                raise
        return job

    async def get(self, job_id: str) -> Job | None:
        """One job by id."""
        async with self.sessions() as session:
            return await session.get(Job, job_id)

    async def load(self, job_id: str) -> LoadedJob | None:
        """A job with its approval and profile rows, in one statement (a claim reads all)."""
        async with self.sessions() as session:
            row = (await session.exec(
                select(Job, JobApproval, SigningProfile)
                .outerjoin(JobApproval, JobApproval.job_id == Job.id)
                .outerjoin(SigningProfile, SigningProfile.name == Job.profile_name)
                .where(Job.id == job_id))).first()
        return None if row is None else LoadedJob(*row)

    async def transition(self, job_id: str, expected: Iterable[JobStatus], to: JobStatus,
                         message: str, *, code: str | None = None,
                         event: OperationalEvent | None = None, **fields: object) -> bool:
        """Move a job from one of `expected` to `to`; False (nothing written) if it wasn't."""
        expected = [s.value for s in expected]
        now = utcnow()
        async with self.sessions() as session:
            # With one expected state the conditional update itself proves where it came from.
            current = expected[0] if len(expected) == 1 else (await session.exec(
                select(Job.status).where(Job.id == job_id))).first()
            result = await session.exec(
                update(Job)
                .where(Job.id == job_id, Job.status.in_(expected))
                .values(status=to.value, updated_at=now, version=Job.version + 1, **fields)
            )
            if result.rowcount != 1:
                await session.rollback()
                return False
            session.add(JobHistory(job_id=job_id, from_status=current, to_status=to.value,
                                   code=code, message=message, at=now))
            if event is not None:
                session.add(event)
            await session.commit()
        return True

    async def claim(self, job_id: str, message: str, **fields: object) -> Claim:
        """Queued -> Processing only while the pipeline runs, in one conditional statement."""
        now = utcnow()
        async with self.sessions() as session:
            result = await session.exec(
                update(Job)
                .where(Job.id == job_id, Job.status == JobStatus.QUEUED.value,
                       _not_paused((await session.connection()).dialect.name))
                .values(status=JobStatus.PROCESSING.value, updated_at=now,
                        version=Job.version + 1, **fields))
            if result.rowcount != 1:
                await session.rollback()
                status = (await session.exec(select(Job.status).where(Job.id == job_id))).first()
                return Claim.PAUSED if status == JobStatus.QUEUED.value else Claim.NOT_QUEUED
            session.add(JobHistory(job_id=job_id, from_status=JobStatus.QUEUED.value,
                                   to_status=JobStatus.PROCESSING.value, message=message, at=now))
            await session.commit()
        return Claim.CLAIMED

    async def note(self, job_id: str, message: str, *, code: str | None = None,
                   event: OperationalEvent | None = None, preceded_by: str | None = None,
                   **fields: object) -> None:
        """A history row (and field updates) without a state change; `preceded_by` is an
        earlier row written in the same transaction."""
        async with self.sessions() as session:
            if fields:
                await session.exec(update(Job).where(Job.id == job_id)
                                   .values(updated_at=utcnow(), **fields))
            if preceded_by is not None:
                # Added first, inserted first: the unit of work keeps the order of `add`.
                session.add(JobHistory(job_id=job_id, message=preceded_by))
            session.add(JobHistory(job_id=job_id, code=code, message=message))
            if event is not None:
                session.add(event)
            await session.commit()

    async def latest_for_path(self, original_path: str) -> Job | None:
        """The newest job of an original path (case-insensitive)."""
        async with self.sessions() as session:
            return (await session.exec(
                select(Job).where(func.lower(Job.original_path) == original_path.lower())
                .order_by(Job.created_at.desc()).limit(1))).first()

    async def name_owner(self, file_name: str) -> Job | None:
        """A Completed or active job that already has this file name (host-wide, any case)."""
        async with self.sessions() as session:
            return (await session.exec(
                select(Job).where(func.lower(Job.file_name) == file_name.lower(),
                                  Job.status.in_(_NAME_HOLDERS))
                .order_by(Job.created_at).limit(1))).first()

    async def path_and_name(self, original_path: str | None, file_name: str | None
                            ) -> tuple[Job | None, Job | None]:
        """`latest_for_path` and `name_owner` in one statement (None: that one isn't asked)."""
        parts = []
        if original_path is not None:
            parts.append(select(Job.id).where(
                func.lower(Job.original_path) == original_path.lower())
                .order_by(Job.created_at.desc()).limit(1).correlate(None).scalar_subquery())
        if file_name is not None:
            parts.append(select(Job.id).where(
                func.lower(Job.file_name) == file_name.lower(), Job.status.in_(_NAME_HOLDERS))
                .order_by(Job.created_at).limit(1).correlate(None).scalar_subquery())
        if not parts:
            return None, None
        async with self.sessions() as session:
            rows = (await session.exec(select(Job).where(Job.id.in_(parts)))).all()
        # At most two rows, each the answer to one question: sorted out as SQL chose them.
        on_path = [r for r in rows if original_path is not None
                   and r.original_path.lower() == original_path.lower()]
        holders = [r for r in rows if file_name is not None and r.status in _NAME_HOLDERS
                   and r.file_name.lower() == file_name.lower()]
        return (max(on_path, key=lambda r: r.created_at, default=None),
                min(holders, key=lambda r: r.created_at, default=None))

    async def unstarted_queued(self, created_before: datetime, limit: int = 500) -> list[str]:
        """Queued jobs whose workflow start was never confirmed, created before a moment."""
        async with self.sessions() as session:
            return list((await session.exec(
                select(Job.id).where(Job.status == JobStatus.QUEUED.value,
                                     Job.workflow_started_at.is_(None),
                                     Job.created_at < created_before)
                .order_by(Job.created_at).limit(limit))).all())

    async def mark_workflow_started(self, *job_ids: str) -> None:
        """Record that these jobs' workflows exist (one statement, one commit)."""
        async with self.sessions() as session:
            await session.exec(update(Job).where(Job.id.in_(job_ids))
                               .values(workflow_started_at=utcnow()))
            await session.commit()

    async def profile(self, name: str) -> SigningProfile | None:
        """A signing profile by name."""
        async with self.sessions() as session:
            return await session.get(SigningProfile, name)

    async def profile_for_folder(self, folder: str) -> SigningProfile | None:
        """The profile that owns an input folder, if any."""
        async with self.sessions() as session:
            return (await session.exec(select(SigningProfile).where(
                func.lower(SigningProfile.input_folder) == folder.lower()))).first()

"""Job rows and their history: every transition a conditional update on the expected state."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import Connection, func
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.contracts.jobs import ACTIVE_STATUSES, JobStatus
from activities.signer.job_writes import (
    JobWrites,
    history_row,
    insert_event,
    insert_history,
    insert_job,
    mark_started,
    status_of,
    update_params,
)
from activities.signer.models.approvals import JobApproval
from activities.signer.models.jobs import Job, SigningProfile
from shared.db.models import OperationalEvent, utcnow


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


class JobRepository:
    """Reads and conditional writes of `jobs` + `job_history`."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions = sessions
        # The hot writes bypass the ORM session, on the same engine (see job_writes).
        self.writes = JobWrites(sessions.kw["bind"])

    async def insert(self, job: Job, message: str, *, code: str | None = None,
                     event: OperationalEvent | None = None) -> Job:
        """Insert a job with its first history row; AlreadyActiveError on the index."""
        history = history_row(job.id, message, at=job.created_at, to_status=job.status,
                              code=code)

        def write(connection: Connection) -> None:
            insert_job(connection, job)
            insert_history(connection, history)
            insert_event(connection, event)

        try:
            await self.writes.run(write)
        except IntegrityError as exc:
            if "ux_jobs_active_original_path" in str(exc) or "original_path" in str(exc):
                raise AlreadyActiveError(job.original_path) from None
            raise
        return job

    async def insert_all(self, jobs: Sequence[tuple[Job, str]]) -> list[Job | Exception]:
        """`insert` of each (job, first history message), in one commit when none is refused.

        One outcome per job: the job, or its own error (AlreadyActiveError...). When the index
        refuses one, each is inserted again on its own, so only that one fails.
        """
        if len(jobs) > 1:
            def write(connection: Connection) -> None:
                for job, message in jobs:
                    insert_job(connection, job)
                    insert_history(connection, history_row(job.id, message, at=job.created_at,
                                                           to_status=job.status))

            try:
                await self.writes.run(write)
                return [job for job, _ in jobs]
            except IntegrityError:
                pass  # rolled back whole: find the refused one below
        outcomes: list[Job | Exception] = []
        for job, message in jobs:
            try:
                outcomes.append(await self.insert(job, message))
            except Exception as exc:  # this job's alone; the others go on
                outcomes.append(exc)
        return outcomes

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
        values = [s.value for s in expected]
        now = utcnow()
        statement = self.writes.update_job(fields, expected=values, to=to.value)
        params = update_params(job_id, now, fields)

        def write(connection: Connection) -> bool:
            # With one expected state the conditional update itself proves where it came from.
            current = values[0] if len(values) == 1 else status_of(connection, job_id)
            if connection.execute(statement, params).rowcount != 1:
                return False
            insert_history(connection, history_row(job_id, message, at=now, from_status=current,
                                                   to_status=to.value, code=code))
            insert_event(connection, event)
            return True

        return await self.writes.run(write)

    async def claim(self, job_id: str, message: str, **fields: object) -> Claim:
        """Queued -> Processing only while the pipeline runs, in one conditional statement."""
        now = utcnow()
        statement = self.writes.update_job(fields, expected=[JobStatus.QUEUED.value],
                                           to=JobStatus.PROCESSING.value, unpaused=True)
        params = update_params(job_id, now, fields)

        def write(connection: Connection) -> Claim:
            if connection.execute(statement, params).rowcount != 1:
                queued = status_of(connection, job_id) == JobStatus.QUEUED.value
                return Claim.PAUSED if queued else Claim.NOT_QUEUED
            insert_history(connection, history_row(
                job_id, message, at=now, from_status=JobStatus.QUEUED.value,
                to_status=JobStatus.PROCESSING.value))
            return Claim.CLAIMED

        return await self.writes.run(write)

    async def note(self, job_id: str, message: str, *, code: str | None = None,
                   event: OperationalEvent | None = None, preceded_by: str | None = None,
                   **fields: object) -> None:
        """A history row (and field updates) without a state change; `preceded_by` is an
        earlier row written in the same transaction."""
        now = utcnow()
        rows = [history_row(job_id, message, at=now, code=code)]
        if preceded_by is not None:
            rows.insert(0, history_row(job_id, preceded_by, at=now))
        statement = self.writes.update_job(fields) if fields else None
        params = update_params(job_id, now, fields)

        def write(connection: Connection) -> None:
            if statement is not None:
                connection.execute(statement, params)
            insert_history(connection, *rows)
            insert_event(connection, event)

        await self.writes.run(write)

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
        return (await self.paths_and_names([(original_path, file_name)]))[0]

    async def paths_and_names(self, questions: Sequence[tuple[str | None, str | None]]
                              ) -> list[tuple[Job | None, Job | None]]:
        """`path_and_name` for each (path, name), all in one statement."""
        parts = []
        for original_path, file_name in questions:
            if original_path is not None:
                parts.append(select(Job.id).where(
                    func.lower(Job.original_path) == original_path.lower())
                    .order_by(Job.created_at.desc()).limit(1).correlate(None).scalar_subquery())
            if file_name is not None:
                parts.append(select(Job.id).where(
                    func.lower(Job.file_name) == file_name.lower(), Job.status.in_(_NAME_HOLDERS))
                    .order_by(Job.created_at).limit(1).correlate(None).scalar_subquery())
        rows: list[Job] = []
        if parts:
            async with self.sessions() as session:
                rows = list((await session.exec(select(Job).where(Job.id.in_(parts)))).all())
        return [_answers(rows, original_path, file_name)
                for original_path, file_name in questions]

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
        await self.writes.run(lambda connection: mark_started(connection, job_ids))

    async def profile(self, name: str) -> SigningProfile | None:
        """A signing profile by name."""
        async with self.sessions() as session:
            return await session.get(SigningProfile, name)

    async def profile_for_folder(self, folder: str) -> SigningProfile | None:
        """The profile that owns an input folder, if any."""
        async with self.sessions() as session:
            return (await session.exec(select(SigningProfile).where(
                func.lower(SigningProfile.input_folder) == folder.lower()))).first()


def _answers(rows: list[Job], original_path: str | None, file_name: str | None
             ) -> tuple[Job | None, Job | None]:
    """The path's latest job and the name's holder among `rows` (each the answer to a question)."""
    on_path = [r for r in rows if original_path is not None
               and r.original_path.lower() == original_path.lower()]
    holders = [r for r in rows if file_name is not None and r.status in _NAME_HOLDERS
               and r.file_name.lower() == file_name.lower()]
    return (max(on_path, key=lambda r: r.created_at, default=None),
            min(holders, key=lambda r: r.created_at, default=None))

"""Jobs as operators see them: filtered pages, a job's detail, cancel, retry, delete, clear."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func
from sqlmodel import select

from activities.signer.contracts.approvals import ApprovalErrorCode
from activities.signer.contracts.jobs import JobStatus, SignerErrorCode
from activities.signer.contracts.lacuna import LacunaErrorCode
from activities.signer.enqueue import Enqueuer
from activities.signer.models.jobs import Job, JobHistory
from activities.signer.operator.clear import ClearResult, clear_jobs
from activities.signer.operator.commands import CANCELABLE, cancel_job, retry_job
from activities.signer.operator.delete_job import DeleteReport, delete_job
from activities.signer.operator.errors import refuse
from activities.signer.operator.transitions import TransitionTail
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.db.models import as_utc
from shared.paging import Page, after, bounded, page_of
from shared.temporal import TemporalHandle

# Failed jobs a retry refuses by decision (their page shows no Retry button).
NOT_RETRIABLE = frozenset({ApprovalErrorCode.REJECTED.value,
                           SignerErrorCode.FILE_ALREADY_PROCESSED.value,
                           LacunaErrorCode.FOLDER_NO_ACTION.value})
RUNNING = (JobStatus.PROCESSING, JobStatus.VERIFYING)


@dataclass(frozen=True)
class JobFilter:
    """What a list of jobs narrows by (all optional)."""

    statuses: list[str] = field(default_factory=list)
    profile: str | None = None
    folder: str | None = None
    text: str | None = None
    created_from: datetime | None = None
    created_to: datetime | None = None


@dataclass(frozen=True)
class JobDetail:
    """A job with its timeline, its children, and what an operator may still do with it."""

    job: Job
    history: list[JobHistory]
    children: list[str]

    @property
    def processing_seconds(self) -> float | None:
        """From the claim to the end (None until both happened)."""
        job = self.job
        if job.completed_at is None or job.started_at is None:
            return None
        return (as_utc(job.completed_at) - as_utc(job.started_at)).total_seconds()

    @property
    def cancelable(self) -> bool:
        """Queued, AwaitingApproval or AwaitingSigner."""
        return self.job.status in CANCELABLE

    @property
    def signer_folder(self) -> bool:
        """A job that signs a Lacuna Signer document (Method = SignerFolder), not a file."""
        return self.job.remote_flow_action_id is not None

    @property
    def retriable(self) -> bool:
        """Failed, and not refused by a decision (a rejection, a name already processed); a
        Signer-folder job also from Canceled (the retry re-reads the document)."""
        if self.signer_folder:
            return self.job.status in (JobStatus.FAILED, JobStatus.CANCELED)
        return self.job.status == JobStatus.FAILED and self.job.error_code not in NOT_RETRIABLE

    @property
    def deletable(self) -> bool:
        """Anything but a job a worker is running."""
        return self.job.status not in RUNNING


class SignerJobs:
    """Reads and operator commands on jobs."""

    def __init__(self, repository: JobRepository, storage: StorageTree, enqueuer: Enqueuer,
                 temporal: TemporalHandle) -> None:
        self._repository = repository
        self._sessions = repository.sessions
        self._storage = storage
        self._enqueuer = enqueuer
        self._temporal = temporal

    async def page(self, filters: JobFilter, *, limit: int = 50,
                   cursor: str | None = None) -> Page[Job]:
        """A page of jobs, newest first (the cursor continues after the previous page)."""
        limit = bounded(limit)
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
        # Keyset pagination: a row-value comparison the (status, created_at, id) index answers
        # as a range, so page 1,000 costs what page 1 does.
        query = after(query, (Job.created_at, Job.id), cursor, kinds=(datetime, str))
        async with self._sessions() as session:
            rows = list((await session.exec(query.limit(limit + 1))).all())
        return page_of(rows, limit, lambda job: (job.created_at, job.id))

    async def get(self, job_id: str) -> Job:
        """One job's row, or job.not-found."""
        job = await self._repository.get(job_id)
        if job is None:
            raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
        return job

    async def detail(self, job_id: str) -> JobDetail:
        """One job with its history and children, or job.not-found."""
        async with self._sessions() as session:
            job = await session.get(Job, job_id)
            if job is None:
                raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
            history = list((await session.exec(select(JobHistory).where(
                JobHistory.job_id == job_id).order_by(JobHistory.id))).all())
            children = list((await session.exec(select(Job.id).where(
                Job.parent_job_id == job_id).order_by(Job.created_at))).all())
        return JobDetail(job, history, children)

    async def status_counts(self) -> dict[str, int]:
        """How many jobs are in each status (statuses with none are absent)."""
        async with self._sessions() as session:
            return dict((await session.exec(select(Job.status, func.count())
                                            .group_by(Job.status))).all())

    async def cancel(self, job_id: str, *, reason: str | None, actor: str) -> Job:
        """Queued / AwaitingApproval / AwaitingSigner -> Canceled; otherwise job.not-queued."""
        return await cancel_job(self._repository, self._temporal, job_id,
                                         reason=reason, actor=actor)

    async def retry(self, job_id: str) -> Job:
        """A new Queued job for a Failed one, with the profile the failed job recorded."""
        return await self.get(await retry_job(self._repository, self._enqueuer, job_id))

    async def delete(self, job_id: str, *, actor: str,
                     reason: str | None = None) -> DeleteReport:
        """Remove a job and the files it owns; a running job can't be deleted."""
        return await delete_job(self._repository, self._storage, self._temporal,
                                           job_id, actor=actor, reason=reason)

    async def clear(self, *, actor: str) -> ClearResult:
        """Clear Jobs: every job whatever its status, its files, and the events before it."""
        return await clear_jobs(self._sessions, self._storage, actor=actor)

    async def follow(self, *, cursor: str, job_id: str | None = None) -> TransitionTail:
        """The transitions after `cursor` (from now on when empty), optionally of one job."""
        return await TransitionTail.start(self._sessions, cursor=cursor, job_id=job_id)

"""Turning a file into a job: the one path shared by the watcher, rescan, upload and retry."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from activities.signer.contracts.jobs import (
    ACTIVE_STATUSES,
    JobSource,
    JobStatus,
    RunJobInput,
    SignerErrorCode,
    job_workflow_id,
    task_queues,
)
from activities.signer.contracts.names import JOB_WORKFLOW
from activities.signer.metrics import JOBS_ENQUEUED
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.names import name_problem
from activities.signer.profiles import format_for
from activities.signer.repository import AlreadyActiveError, JobRepository, new_job_id
from activities.signer.storage import StorageError, StorageTree
from shared.coalesce import Coalescer
from shared.contracts import search_attributes
from shared.db.models import OperationalEvent
from shared.logs import props
from shared.settings import Settings
from shared.temporal import TemporalHandle
from shared.visibility import start_workflow

log = logging.getLogger("esteira.signer.enqueue")
# Files a lookup statement (two subqueries each) or an insert commit takes at once.
COALESCED_FILES = 32
# A job born Failed with one of these moved its file to error/<job>/: it left nothing in the
# folder to hold back, so a file found at that path later is a new drop, judged on its own.
MOVED_ASIDE_CODES = frozenset({SignerErrorCode.FILE_ALREADY_PROCESSED,
                               SignerErrorCode.INPUT_INVALID_NAME})


# A lookup's question (a path, a name: None when not asked) and its answer (the path's latest
# job, the name's holder).
Question = tuple[str | None, str | None]
Answer = tuple[Job | None, Job | None]


class Outcome(StrEnum):
    """What happened to a candidate file."""

    ENQUEUED = "enqueued"
    ALREADY_ACTIVE = "already-active"
    ALREADY_PROCESSED = "already-processed"
    # Born Failed with input.invalid-name and moved to error/: the name can't be carried.
    INVALID_NAME = "invalid-name"
    SKIPPED = "skipped"
    REFUSED = "refused"


@dataclass(frozen=True)
class EnqueueResult:
    """The outcome, the job it concerns (if any) and a human reason."""

    outcome: Outcome
    job_id: str | None = None
    code: str | None = None
    message: str = ""


@dataclass(frozen=True)
class Screening:
    """What is asked of a candidate file once: why its name can't be carried (None: it can),
    the latest job of its path (asked for the watcher) and the job that holds its name."""

    name_problem: str | None
    latest: Job | None = None
    owner: Job | None = None


class _StartMarks:
    """`workflow_started_at` for the starts that finish together, in one commit."""

    def __init__(self, repository: JobRepository) -> None:
        self.repository = repository
        self._pending: set[str] = set()
        self._writing = asyncio.Lock()

    async def mark(self, job_id: str) -> None:
        """Return once this job's mark is committed (possibly by a sibling's write)."""
        self._pending.add(job_id)
        # A burst of parallel enqueues (the watcher's batches) waits here while one write
        # carries every mark that arrived meanwhile: one commit instead of one per file.
        async with self._writing:
            if job_id not in self._pending:
                return  # an earlier holder's write carried it
            batch, self._pending = self._pending, set()
            try:
                await self.repository.mark_workflow_started(*batch)
            except BaseException:
                self._pending |= batch  # the siblings waiting on it write them again
                raise


class Enqueuer:
    """Creates job rows and starts their workflows (one per process: its batches span every
    upload, rescan, retry and watcher of the process)."""

    def __init__(self, repository: JobRepository, storage: StorageTree,
                 temporal: TemporalHandle, *, reject_processed_names: bool = True,
                 task_queue_suffix: str = "", heartbeat_timeout_seconds: float = 30.0) -> None:
        self.repository = repository
        self.storage = storage
        self.temporal = temporal
        self.reject_processed_names = reject_processed_names
        self.jobs_queue, self.signing_queue = task_queues(task_queue_suffix)
        self.heartbeat_timeout_seconds = heartbeat_timeout_seconds
        self._marks = _StartMarks(repository)
        # A burst of parallel enqueues (the watcher's batches) asks its questions and writes
        # its new rows together: one statement and one commit for the files that wait meanwhile.
        # Each batch calls the repository's method as it is then (none is bound here).
        self._lookups: Coalescer[Question, Answer] = Coalescer(
            lambda questions: self.repository.paths_and_names(questions), limit=COALESCED_FILES)
        self._inserts: Coalescer[tuple[Job, str], Job] = Coalescer(
            lambda jobs: self.repository.insert_all(jobs), limit=COALESCED_FILES)

    @classmethod
    def from_settings(cls, repository: JobRepository, storage: StorageTree,
                      temporal: TemporalHandle, settings: Settings) -> Enqueuer:
        """An enqueuer configured by `Pipeline:*` (built without I/O: the handle connects on the
        first start)."""
        pipeline = settings.pipeline
        return cls(repository, storage, temporal,
                   reject_processed_names=pipeline.reject_already_processed_file_names,
                   task_queue_suffix=pipeline.task_queue_suffix,
                   heartbeat_timeout_seconds=pipeline.heartbeat_timeout_seconds)

    def checks_names(self, source: JobSource) -> bool:
        """Whether a file from `source` is refused for a name a job already holds."""
        return self.reject_processed_names and source is not JobSource.RETRY

    async def lookup(self, path: Path, *, source: JobSource) -> Answer:
        """The store's two questions in one round trip: the path's latest job (asked for the
        watcher) and the job holding its name (when names are checked for `source`)."""
        # The watcher asks them of every file it sees: batched with its siblings' questions.
        return await self._lookups((str(path) if source is JobSource.WATCHER else None,
                                    path.name if self.checks_names(source) else None))

    async def screen(self, path: Path, *, source: JobSource) -> Screening:
        """The name rule and the store's questions, asked once."""
        return Screening(name_problem(path.name), *await self.lookup(path, source=source))

    async def enqueue(self, path: Path, *, source: JobSource, profile: SigningProfile,
                      folder: str | None = None, parent_job_id: str | None = None,
                      screening: Screening | None = None,
                      signature_format: str | None = None) -> EnqueueResult:
        """Make `path` a Queued job of `profile`, unless a rule says otherwise.

        `screening`: what the caller already asked (`screen`), so nothing is asked twice.
        `signature_format`: the Format a retry keeps (else the profile's, by extension).
        """
        if not profile.enabled:
            return EnqueueResult(Outcome.REFUSED, code=SignerErrorCode.PROFILE_DISABLED,
                                 message=f"Profile {profile.name} is disabled.")
        screening = screening or await self.screen(path, source=source)
        latest, owner = screening.latest, screening.owner
        if latest and latest.status in (JobStatus.FAILED, JobStatus.CANCELED) \
                and latest.error_code not in MOVED_ASIDE_CODES:
            # Only an operator's upload, retry or rescan brings such a file back (asked only
            # for the watcher).
            return EnqueueResult(Outcome.SKIPPED, latest.id,
                                 message=f"latest job {latest.id} is {latest.status}")
        if screening.name_problem is not None:
            return await self._invalid_name(path, source, profile, folder,
                                            screening.name_problem)
        if self.checks_names(source):
            if owner is not None and owner.status in ACTIVE_STATUSES \
                    and owner.original_path.lower() == str(path).lower():
                # The same file again while its job runs: a duplicate, not a second file.
                return EnqueueResult(Outcome.ALREADY_ACTIVE, owner.id,
                                     message=f"{path} already has job {owner.id}")
            if owner is not None:
                return await self._already_processed(path, source, profile, folder, owner)
        job = self._new_job(path, source=source, profile=profile, folder=folder,
                            status=JobStatus.QUEUED, parent_job_id=parent_job_id)
        if signature_format is not None:
            job.format = signature_format
        try:
            await self._inserts((job, f"Queued from {source.value}"
                                      f"{f' ({folder})' if folder else ''}."))
        except AlreadyActiveError:
            return EnqueueResult(Outcome.ALREADY_ACTIVE, message=f"{path} already has a job")
        JOBS_ENQUEUED.labels(source=source.value).inc()
        await self.start_workflow(job.id, job)
        log.info("Queued job %s for %s", job.id, path,
                 extra=props(JobId=job.id, Profile=profile.name, Source=source.value))
        return EnqueueResult(Outcome.ENQUEUED, job.id)

    async def start_workflow(self, job_id: str, job: Job | None = None) -> None:
        """Start (or find already started) the job's workflow; a Queued row is the truth."""
        job = job or await self.repository.get(job_id)
        file_name, profile = (job.file_name, job.profile_name or "") if job else ("", "")
        client = await self.temporal()
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await start_workflow(
                client, JOB_WORKFLOW,
                RunJobInput(job_id=job_id, signing_task_queue=self.signing_queue,
                            heartbeat_timeout_seconds=self.heartbeat_timeout_seconds),
                search_attributes=search_attributes.signer_job(
                    file_name=file_name, profile=profile, status=JobStatus.QUEUED),
                memo=search_attributes.summary_memo(
                    f"Sign {file_name} with profile {profile} (job {job_id})"),
                id=job_workflow_id(job_id), task_queue=self.jobs_queue,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING)
        await self._marks.mark(job_id)

    async def _already_processed(self, path: Path, source: JobSource, profile: SigningProfile,
                                 folder: str | None, owner: Job) -> EnqueueResult:
        message = (f"A file named {path.name} was already processed by job {owner.id} "
                   f"({owner.status}).")
        if source is JobSource.UPLOAD:
            return EnqueueResult(Outcome.ALREADY_PROCESSED, owner.id,
                                 SignerErrorCode.FILE_ALREADY_PROCESSED, message)
        return await self._born_failed(
            path, source, profile, folder, Outcome.ALREADY_PROCESSED,
            SignerErrorCode.FILE_ALREADY_PROCESSED, message, "FileAlreadyProcessed",
            {"ownerJobId": owner.id})

    async def _invalid_name(self, path: Path, source: JobSource, profile: SigningProfile,
                            folder: str | None, problem: str) -> EnqueueResult:
        if source in (JobSource.UPLOAD, JobSource.RETRY):
            # An operator's request: refused with the reason, nothing recorded or moved.
            return EnqueueResult(Outcome.REFUSED, code=SignerErrorCode.INPUT_INVALID_NAME,
                                 message=problem)
        # A dropped file: recorded and moved aside, so it is neither lost nor offered again.
        return await self._born_failed(path, source, profile, folder, Outcome.INVALID_NAME,
                                       SignerErrorCode.INPUT_INVALID_NAME, problem,
                                       "InvalidFileName", {})

    async def _born_failed(self, path: Path, source: JobSource, profile: SigningProfile,
                           folder: str | None, outcome: Outcome, code: SignerErrorCode,
                           message: str, event_type: str, properties: dict) -> EnqueueResult:
        """A job that starts Failed with `code`, its file moved to `error/<job>/`, an event."""
        job = self._new_job(path, source=source, profile=profile, folder=folder,
                            status=JobStatus.FAILED)
        try:
            moved = await asyncio.to_thread(self.storage.move_input_to_error, job.id, path)
        except (StorageError, OSError) as exc:
            # Left in the folder, nothing recorded: the next scan tries again.
            log.warning("%s could not be moved aside (%s): %s", path, code, exc)
            return EnqueueResult(Outcome.REFUSED, code=SignerErrorCode.INPUT_LOCKED,
                                 message=str(exc))
        job.error_code = code
        job.error_message = message
        event = OperationalEvent(domain="signer", type=event_type, message=message,
                                 properties={"jobId": job.id, "fileName": path.name,
                                             "folder": folder, "movedTo": str(moved),
                                             **properties})
        await self.repository.insert(job, f"{message} Moved to {moved}.", code=code,
                                     event=event)
        log.warning("%s Moved to %s.", message, moved, extra=props(JobId=job.id, Code=code))
        return EnqueueResult(outcome, job.id, code, message)

    @staticmethod
    def _new_job(path: Path, *, source: JobSource, profile: SigningProfile, folder: str | None,
                 status: JobStatus, parent_job_id: str | None = None) -> Job:
        return Job(id=new_job_id(), file_name=path.name, original_path=str(path), folder=folder,
                   source=source.value, profile_name=profile.name,
                   format=format_for(profile.format, path.name).value, status=status.value,
                   parent_job_id=parent_job_id)

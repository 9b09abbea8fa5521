"""The steps every signing method shares: read the profile, run in the pool, move, fail."""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import BrokenExecutor, Executor

from activities.signer.contracts.jobs import JobResult, JobStatus, SignerErrorCode
from activities.signer.metrics import JOBS_FINISHED, STAGE_SECONDS
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.db.models import OperationalEvent, utcnow
from shared.logs import props

log = logging.getLogger("esteira.signer.pipeline")


class JobFailed(Exception):
    """Ends the job as Failed with a stable code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class JobSteps:
    """One worker's store, files, signing pool and key: what the pipeline and methods share."""

    def __init__(self, repository: JobRepository, storage: StorageTree, pool: Executor, *,
                 encryption_key: bytes | None) -> None:
        self.repository = repository
        self.storage = storage
        self.pool = pool
        self.encryption_key = encryption_key

    async def profile(self, job: Job) -> SigningProfile:
        """The job's profile, refused when it is gone or can't do what it says."""
        return self.usable_profile(job, await self.repository.profile(job.profile_name or ""))

    def usable_profile(self, job: Job, profile: SigningProfile | None) -> SigningProfile:
        """`profile` (the job's, already read), refused when gone or unable to do its job."""
        if profile is None:
            raise JobFailed(SignerErrorCode.PROFILE_NOT_FOUND,
                            f"Signing profile {job.profile_name!r} does not exist.")
        if profile.encrypt and self.encryption_key is None:
            raise JobFailed(SignerErrorCode.PROFILE_DEGRADED,
                            f"Profile {profile.name} encrypts but no "
                            "ESTEIRA_SIGNING__ENCRYPTION_PASSPHRASE is configured.")
        return profile

    async def in_pool(self, step, request):
        """Run a CPU-bound engine step in the signing pool; a refusal fails the job."""
        loop = asyncio.get_running_loop()
        try:
            with STAGE_SECONDS.labels(stage=step.__name__).time():
                outcome = await loop.run_in_executor(self.pool, step, request)
        except (BrokenExecutor, OSError):
            # A dead signing process is a lost worker (retried as one); a file error is the
            # job's own, failed with its code by process_job.
            raise
        except Exception as exc:
            raise JobFailed(SignerErrorCode.SIGNING_FAILED,
                            f"{step.__name__} raised {type(exc).__name__}: {exc}") from None
        if not outcome.ok:
            raise JobFailed(outcome.code or SignerErrorCode.SIGNING_FAILED, outcome.message)
        return outcome

    async def transition(self, job: Job, expected: JobStatus, to: JobStatus, message: str,
                         *, event: OperationalEvent | None = None, **fields: object) -> None:
        """Move the job on, or fail it: it left `expected` while this worker held it."""
        if not await self.repository.transition(job.id, [expected], to, message, event=event,
                                                **fields):
            raise JobFailed(SignerErrorCode.JOB_INTERRUPTED,
                            f"Job left {expected.value} while this worker held it.")

    async def fail(self, job: Job, code: str, message: str) -> JobResult:
        """End the job as Failed; its staged content is kept under error/."""
        moved = await asyncio.to_thread(self.storage.move_to_error, job.id)
        where = f" Staged content kept in {moved}." if moved else ""
        await self.repository.transition(
            job.id, [JobStatus.QUEUED, JobStatus.PROCESSING, JobStatus.VERIFYING,
                     JobStatus.AWAITING_SIGNER],
            JobStatus.FAILED, message + where, code=code, error_code=code,
            error_message=message, completed_at=utcnow())
        JOBS_FINISHED.labels(status=JobStatus.FAILED.value, profile=job.profile_name or "",
                             format=job.format).inc()
        log.error("Job %s failed (%s): %s", job.id, code, message,
                  extra=props(JobId=job.id, Code=code))
        return JobResult(job_id=job.id, status=JobStatus.FAILED, error_code=code,
                         message=message)


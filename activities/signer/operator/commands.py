"""Cancel and retry: the seed's rules, one conditional write each (`SignerJobs` calls them)."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

from activities.signer.contracts.approvals import ApprovalErrorCode
from activities.signer.contracts.jobs import JobSource, JobStatus, SignerErrorCode, job_workflow_id
from activities.signer.contracts.lacuna import LacunaErrorCode
from activities.signer.enqueue import Enqueuer, Outcome
from activities.signer.lacuna.discovery import retry_signer_folder_job
from activities.signer.models.jobs import Job
from activities.signer.operator.errors import refuse
from activities.signer.repository import JobRepository
from shared.db.models import utcnow
from shared.free_text import bounded_reason
from shared.temporal import TemporalHandle

log = logging.getLogger("esteira.signer.operator")
CANCELABLE = (JobStatus.QUEUED, JobStatus.AWAITING_APPROVAL, JobStatus.AWAITING_SIGNER)


async def cancel_job(repository: JobRepository, temporal: TemporalHandle, job_id: str, *,
                     reason: str | None, actor: str) -> Job:
    """Queued / AwaitingApproval / AwaitingSigner -> Canceled; otherwise job.not-queued."""
    reason = bounded_reason(reason)
    job = await repository.get(job_id)
    if job is None:
        raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
    message = f"Operator canceled: {reason.rstrip('.')}." if reason else "Operator canceled."
    if not await repository.transition(job_id, CANCELABLE, JobStatus.CANCELED, message,
                                       completed_at=utcnow()):
        current = await repository.get(job_id)
        raise refuse(SignerErrorCode.JOB_NOT_QUEUED,
                     f"Job {job_id} is {current.status if current else 'gone'}; only Queued, "
                     "AwaitingApproval and AwaitingSigner jobs can be canceled.")
    # The row is the truth; stopping the workflow early just spares a worker the visit.
    with contextlib.suppress(Exception):
        client = await temporal()
        await client.get_workflow_handle(job_workflow_id(job_id)).cancel()
    log.info("Job %s canceled by %s", job_id, actor)
    canceled = await repository.get(job_id)
    if canceled is None:  # deleted since the cancel
        raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
    return canceled


async def retry_job(repository: JobRepository, enqueuer: Enqueuer, job_id: str) -> str:
    """A new Queued job for a Failed one, with the profile the failed job recorded."""
    job = await repository.get(job_id)
    if job is None:
        raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
    if job.remote_flow_action_id is not None:
        # A Signer-folder job has no file; it is retried from Failed or Canceled.
        return await retry_signer_folder_job(repository, enqueuer, job)
    if job.status != JobStatus.FAILED:
        raise refuse(SignerErrorCode.JOB_NOT_FAILED, f"Job {job_id} is {job.status}, not Failed.")
    if job.error_code == LacunaErrorCode.FOLDER_NO_ACTION:
        raise refuse(SignerErrorCode.JOB_INPUT_MISSING,
                     "The Signer document has no action for this profile's holder: there is "
                     "nothing to sign. The next scan that finds it registers it again, once.")
    if job.error_code == ApprovalErrorCode.REJECTED:
        raise refuse(SignerErrorCode.JOB_REJECTED_NOT_RETRIABLE,
                     "An approver rejected this file after a worker claimed it; fix the file "
                     "and send it again.")
    if job.error_code == SignerErrorCode.FILE_ALREADY_PROCESSED:
        raise refuse(SignerErrorCode.FILE_ALREADY_PROCESSED,
                     "This job was refused because another job holds the file name; delete "
                     "that job instead of retrying.")
    source = Path(job.original_path)
    if not source.is_file():
        raise refuse(SignerErrorCode.JOB_INPUT_MISSING,
                     # The file's name, not its path: refusals don't map the host's disk.
                     f"The original input {source.name} is no longer on disk.")
    profile = await repository.profile(job.profile_name or "")
    if profile is None:
        raise refuse(SignerErrorCode.PROFILE_NOT_FOUND,
                     f"The profile this job recorded ({job.profile_name}) no longer exists.")
    # The same FileName / OriginalPath / Format: the profile's format may have changed since.
    result = await enqueuer.enqueue(source, source=JobSource.RETRY, profile=profile,
                                    folder=job.folder, parent_job_id=job.id,
                                    signature_format=job.format)
    if result.outcome is Outcome.ALREADY_ACTIVE:
        raise refuse(SignerErrorCode.JOB_ALREADY_ACTIVE,
                     f"Another active job already holds {source.name}.")
    if result.outcome is not Outcome.ENQUEUED:
        raise refuse(SignerErrorCode(result.code or SignerErrorCode.PROFILE_DISABLED),
                     result.message)
    assert result.job_id is not None  # an enqueued result names its new job
    return result.job_id

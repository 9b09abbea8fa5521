"""The approval steps the job workflow runs on its own (never paused) queue."""

from __future__ import annotations

import asyncio

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.signer.approvals.mail import OutboxDrain
from activities.signer.approvals.store import ApprovalStore
from activities.signer.approvals.veto import veto
from activities.signer.contracts.approvals import (
    ApprovalErrorCode,
    ApprovalJobInput,
    ApprovalState,
    ApprovalStepResult,
    ApprovalTally,
)
from activities.signer.contracts.jobs import JobResult, JobStatus
from activities.signer.contracts.names import (
    APPROVAL_CLEANUP_ACTIVITY,
    APPROVAL_EXPIRE_ACTIVITY,
    APPROVAL_NOTIFY_ACTIVITY,
    APPROVAL_REJECT_ACTIVITY,
    APPROVAL_RELEASE_ACTIVITY,
    APPROVAL_TALLY_ACTIVITY,
)
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.db.models import OperationalEvent

EXPIRED_MESSAGE = "Approval window expired."


class ApprovalActivities:
    """Tally, release, veto, expiry, cancel cleanup and notifications of held jobs."""

    def __init__(self, store: ApprovalStore, repository: JobRepository, storage: StorageTree,
                 drain: OutboxDrain, *, encryption_key: bytes | None) -> None:
        self.store = store
        self.repository = repository
        self.storage = storage
        self.drain = drain
        self.encryption_key = encryption_key

    def all(self) -> list:
        """Every activity of this class, for a worker's registration."""
        return [self.tally, self.release, self.reject, self.expire, self.cleanup, self.notify]

    @activity.defn(name=APPROVAL_TALLY_ACTIVITY)
    async def tally(self, request: ApprovalJobInput) -> ApprovalTally:
        """The job's status and its decisions so far."""
        return await self.store.tally(request.job_id)

    @activity.defn(name=APPROVAL_RELEASE_ACTIVITY)
    async def release(self, request: ApprovalJobInput) -> ApprovalStepResult:
        """Quorum reached: back to Queued, to be claimed like any job."""
        applied = await self.store.release(request.job_id)
        return ApprovalStepResult(applied=applied,
                                  job_status=JobStatus.QUEUED.value if applied else None)

    @activity.defn(name=APPROVAL_REJECT_ACTIVITY)
    async def reject(self, request: ApprovalJobInput) -> JobResult:
        """A veto: Canceled, the file returned as `.reject` (or parked in error/)."""
        return await veto(self.store, self.repository, self.storage, request.job_id,
                          held_in=JobStatus.AWAITING_APPROVAL,
                          encryption_key=self.encryption_key)

    @activity.defn(name=APPROVAL_EXPIRE_ACTIVITY)
    async def expire(self, request: ApprovalJobInput) -> ApprovalStepResult:
        """Past `ExpiresAfter`: Canceled, staged copy to error/, `ApprovalExpired`."""
        job_id = request.job_id
        job = await self.repository.get(job_id)
        if job is None:
            return ApprovalStepResult(applied=False)
        event = OperationalEvent(
            domain="signer", type="ApprovalExpired",
            message=f"Job {job_id} ('{job.file_name}') canceled: {EXPIRED_MESSAGE}",
            properties={"jobId": job_id, "profile": job.profile_name})
        ended = await self.store.end_wait(job_id, expected=[ApprovalState.WAITING],
                                          to=ApprovalState.EXPIRED, message=EXPIRED_MESSAGE,
                                          event=event, error_message=EXPIRED_MESSAGE)
        approval = await self.store.get(job_id)
        if ended or (approval is not None and approval.state == ApprovalState.EXPIRED):
            await self._park(job_id)
        return ApprovalStepResult(applied=ended, message=EXPIRED_MESSAGE)

    @activity.defn(name=APPROVAL_CLEANUP_ACTIVITY)
    async def cleanup(self, request: ApprovalJobInput) -> ApprovalStepResult:
        """After an operator cancel: the approval ends and the staged copy goes to error/."""
        job = await self.repository.get(request.job_id)
        if job is None or job.status != JobStatus.CANCELED:
            return ApprovalStepResult(applied=False, job_status=job.status if job else None)
        await self.store.mark(job.id, [ApprovalState.WAITING, ApprovalState.RELEASED],
                              ApprovalState.CANCELED)
        await self._park(job.id)
        return ApprovalStepResult(applied=True, job_status=job.status)

    @activity.defn(name=APPROVAL_NOTIFY_ACTIVITY)
    async def notify(self, request: ApprovalJobInput) -> int:
        """Send the job's pending approval e-mails; a failure retries (the outbox keeps them)."""
        sent, failed = await self.drain.drain(request.job_id)
        if failed:
            raise ApplicationError(f"{failed} approval e-mail(s) not sent yet",
                                   type=ApprovalErrorCode.NOTIFY_FAILED)
        return sent

    async def _park(self, job_id: str) -> None:
        moved = await asyncio.to_thread(self.storage.move_to_error, job_id)
        if moved is not None:
            await self.repository.note(job_id, f"Staged copy moved to {moved}.")


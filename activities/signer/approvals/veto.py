"""The veto: a rejected job ends Canceled, its file back in `output/` as `.reject` (or error/)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from activities.signer.approvals.returns import return_rejected
from activities.signer.approvals.store import ApprovalStore
from activities.signer.contracts.approvals import ApprovalErrorCode, ApprovalState
from activities.signer.contracts.jobs import JobResult, JobStatus
from activities.signer.repository import JobRepository
from activities.signer.storage import Fingerprint, StorageTree

log = logging.getLogger("esteira.signer.approvals")


async def veto(store: ApprovalStore, repository: JobRepository, storage: StorageTree,
               job_id: str, *, held_in: JobStatus, encryption_key: bytes | None) -> JobResult:
    """End a rejected job that is still `held_in` (AwaitingApproval, or Queued after release)."""
    rejection = await store.rejection(job_id)
    who = f"{rejection.approver}: {rejection.reason}" if rejection else "an approver"
    message = f"Rejected by {who}."
    job, approval = await repository.get(job_id), await store.get(job_id)
    if job is None or approval is None or approval.state != ApprovalState.REJECTED \
            or job.status != held_in:
        return JobResult(job_id=job_id, status=JobStatus(job.status) if job
                         else JobStatus.CANCELED, message="not applied")
    # The veto is final (the approval row says Rejected), so the file moves first and
    # the job turns Canceled only once its file is where the history says it is.
    staged, outcome = Path(approval.staged_path), None
    if staged.exists():  # a retry after the move goes straight to the transition
        profile = await repository.profile(job.profile_name or "")
        encrypt = bool(profile and profile.encrypt)
        outcome = await asyncio.to_thread(
            return_rejected, storage, job_id, staged, Path(job.original_path),
            Fingerprint(job.input_size, job.input_sha256),
            encryption_key=encryption_key if encrypt else None)
    returned = outcome.returned if outcome else None
    ended = await store.end_wait(
        job_id, expected=[ApprovalState.REJECTED], to=ApprovalState.REJECTED, held_in=held_in,
        message=f"{message} {outcome.describe()}" if outcome else message,
        code=ApprovalErrorCode.REJECTED, error_message=message,
        **({"output_path": str(returned)} if returned else {}))
    if not ended and outcome is not None:
        # An operator cancel won the transition after the file moved: say where it went.
        await repository.note(job_id, f"{message} {outcome.describe()}")
    log.info("Job %s rejected: %s", job_id, outcome.describe() if outcome else message)
    current = await repository.get(job_id)
    return JobResult(job_id=job_id, status=JobStatus(current.status) if current
                     else JobStatus.CANCELED,
                     error_code=ApprovalErrorCode.REJECTED if ended else None,
                     message=message, output_path=str(returned) if returned else None)

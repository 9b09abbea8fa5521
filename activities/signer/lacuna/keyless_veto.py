"""A KEYLESS job an approver refused at the Lacuna Signer ends like an approval veto."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from activities.signer.approvals.returns import return_rejected
from activities.signer.contracts.approvals import ApprovalErrorCode
from activities.signer.contracts.jobs import JobResult, JobStatus
from activities.signer.job_steps import JobSteps
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.storage import Fingerprint
from shared.db.models import OperationalEvent, utcnow
from shared.logs import props

log = logging.getLogger("esteira.signer.lacuna")


async def veto_refused(steps: JobSteps, job: Job, profile: SigningProfile,
                       refused_by: str) -> JobResult:
    """AwaitingSigner -> Canceled; the file goes back to output/ as `.reject` (or error/)."""
    message = f"Rejected by {refused_by} at the Lacuna Signer."
    staged = steps.storage.staging_dir(job.id) / Path(job.file_name).name
    outcome = None
    if staged.exists():  # a retry after the move goes straight to the transition
        outcome = await asyncio.to_thread(
            return_rejected, steps.storage, job.id, staged, Path(job.original_path),
            Fingerprint(job.input_size or 0, job.input_sha256 or ""),
            encryption_key=steps.encryption_key if profile.encrypt else None)
    returned = outcome.returned if outcome else None
    event = OperationalEvent(
        domain="signer", type="ApprovalDecided", actor=refused_by,
        message=f"Approval decided: {refused_by} refused job {job.id} ('{job.file_name}') "
                "at the Lacuna Signer.",
        properties={"jobId": job.id, "approver": refused_by, "decision": "Rejected",
                    "via": "LacunaSigner", "documentId": job.remote_document_id})
    ended = await steps.repository.transition(
        job.id, [JobStatus.AWAITING_SIGNER], JobStatus.CANCELED,
        f"{message} {outcome.describe()}" if outcome else message,
        code=ApprovalErrorCode.REJECTED, event=event, error_code=ApprovalErrorCode.REJECTED,
        error_message=message, completed_at=utcnow(),
        **({"output_path": str(returned)} if returned else {}))
    log.info("KEYLESS job %s rejected by %s", job.id, refused_by, extra=props(JobId=job.id))
    current = await steps.repository.get(job.id)
    return JobResult(job_id=job.id, status=JobStatus(current.status) if current
                     else JobStatus.CANCELED,
                     error_code=ApprovalErrorCode.REJECTED if ended else None,
                     message=message, output_path=str(returned) if returned else None)

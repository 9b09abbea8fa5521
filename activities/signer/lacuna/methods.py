"""What a signing worker does for the two Lacuna Signer methods (called from the pipeline)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from activities.signer import engine
from activities.signer.lacuna.client import LacunaClient, SignerRefused, SignerUnavailable
from activities.signer.lacuna.cpf import cpf_of
from activities.signer.profiles import certificate_spec
from shared.contracts.signer import JobResult, JobStatus, SignatureFormat
from shared.contracts.signer_lacuna import LacunaErrorCode
from shared.db.models import utcnow
from shared.db.signer_models import Job, SigningProfile
from shared.logs import props

if TYPE_CHECKING:
    from activities.signer.pipeline import SigningActivities

log = logging.getLogger("esteira.signer.lacuna")
CONTENT_TYPES = {SignatureFormat.PADES: "application/pdf", SignatureFormat.XADES: "text/xml"}


def holder_cpf(profile: SigningProfile) -> str | None:
    """The CPF in the profile's certificate (opens it; call off the event loop)."""
    signer = engine.open_certificate(certificate_spec(profile))
    try:
        return cpf_of(signer.certificate)
    finally:
        signer.close()


def holder_action(document: dict[str, Any], action_id: str, cpf: str | None) -> str | None:
    """Why the holder can't sign this action now (None: it is pending, current and theirs)."""
    if document.get("status") != "Pending":
        return f"the document is {document.get('status')}"
    actions = document.get("flowActions") or []
    pending = [a["step"] for a in actions if a.get("status") == "Pending"]
    action = next((a for a in actions if a.get("id") == action_id), None)
    if action is None:
        return "the flow action no longer exists"
    if action.get("status") != "Pending":
        return f"the flow action is {action.get('status')}"
    if action.get("step") != min(pending):
        return "the flow action is not the current step"
    if cpf is None or (action.get("user") or {}).get("identifier") != cpf:
        return "the flow action is not this certificate holder's"
    return None


class RemoteMethods:
    """Dispatch (LacunaSigner) and sign-a-Signer-document (SignerFolder) for one worker."""

    def __init__(self, client: LacunaClient) -> None:
        self.client = client

    async def dispatch(self, pipeline: SigningActivities, job: Job, profile: SigningProfile,
                       staged: Path) -> JobResult:
        """Upload + create the document, then Processing -> AwaitingSigner (slot freed)."""
        from activities.signer.pipeline import JobFailed

        if not profile.signer_flow:
            raise JobFailed("profile.invalid", f"Profile {profile.name} has no Signer flow.")
        # The dispatch is this method's signing call: a worker lost after it never repeats it.
        await pipeline.repository.note(job.id, "Dispatching to the Lacuna Signer.",
                                       signing_started_at=utcnow())
        try:
            upload_id = await self.client.upload(await asyncio.to_thread(staged.read_bytes),
                                                 job.file_name)
            document_id = await self.client.create_document(
                upload_id=upload_id, name=job.file_name, flow=profile.signer_flow,
                content_type=CONTENT_TYPES.get(SignatureFormat(job.format),
                                               "application/octet-stream"))
        except (SignerUnavailable, SignerRefused) as exc:
            raise JobFailed(LacunaErrorCode.DISPATCH_FAILED,
                            f"Could not dispatch to the Lacuna Signer: {exc}") from None
        await pipeline._transition(job, JobStatus.PROCESSING, JobStatus.AWAITING_SIGNER,
                                   f"Dispatched to the Lacuna Signer as document {document_id}.",
                                   remote_document_id=document_id)
        log.info("Job %s dispatched as Signer document %s", job.id, document_id,
                 extra=props(JobId=job.id, DocumentId=document_id))
        return JobResult(job_id=job.id, status=JobStatus.AWAITING_SIGNER,
                         message=document_id)

    async def sign_folder_document(self, pipeline: SigningActivities, job: Job,
                                   profile: SigningProfile) -> JobResult:
        """Re-read the document; sign only while the holder's action is still pending."""
        from activities.signer.pipeline import JobFailed

        if job.remote_document_id is None or job.remote_flow_action_id is None:
            raise JobFailed("profile.invalid", f"Profile {profile.name} signs documents of a "
                            "Signer folder, not files; route files to another profile.")
        document_id, action_id = job.remote_document_id, job.remote_flow_action_id
        cpf = await asyncio.to_thread(holder_cpf, profile)
        document = await self._read(document_id)
        why = holder_action(document, action_id, cpf)
        if why is not None:
            return await self._cancel_moved_on(pipeline, job, why)
        staged_dir = pipeline.storage.staging_dir(job.id)
        staged = staged_dir / Path(job.file_name).name
        artifact = staged_dir / f"signed-{Path(job.file_name).name}"
        try:
            data = await self.client.content(document_id, "Signatures")
        except (SignerUnavailable, SignerRefused) as exc:
            raise JobFailed(LacunaErrorCode.DOWNLOAD_FAILED, f"Could not download: {exc}") \
                from None
        await asyncio.to_thread(_write, staged, data)
        await pipeline.repository.note(job.id, "Signing the Signer document's current version.",
                                       signing_started_at=utcnow())
        await pipeline._in_pool(engine.sign, engine.SignRequest(
            certificate=certificate_spec(profile), fmt=SignatureFormat(job.format),
            staged=str(staged), artifact=str(artifact), policy=profile.policy))
        await pipeline._transition(job, JobStatus.PROCESSING, JobStatus.VERIFYING,
                                   "Signed; verifying, then handing it to the Signer.")
        await pipeline._in_pool(engine.verify_and_seal, engine.VerifyRequest(
            fmt=SignatureFormat(job.format), staged=str(staged), artifact=str(artifact),
            trust_roots=tuple(profile.trust_roots), validate_chain=profile.validate_certificate,
            skip=not profile.verify, policy=profile.policy))
        try:
            upload_id = await self.client.upload(await asyncio.to_thread(artifact.read_bytes),
                                                 job.file_name)
            await self.client.submit_signature(document_id, action_id, upload_id=upload_id,
                                               identifier=cpf or "")
        except (SignerUnavailable, SignerRefused) as exc:
            raise JobFailed(LacunaErrorCode.FOLDER_UPLOAD_FAILED,
                            f"The Signer did not take the signature: {exc}") from None
        await pipeline._transition(job, JobStatus.VERIFYING, JobStatus.COMPLETED,
                                   "Completed: signature handed to the Lacuna Signer.",
                                   completed_at=utcnow())
        await asyncio.to_thread(pipeline.storage.remove_staging, job.id)
        return JobResult(job_id=job.id, status=JobStatus.COMPLETED)

    async def after_interrupt(self, pipeline: SigningActivities, job: Job) -> JobResult:
        """A lost worker past the signing call: the Signer's answer completes, cancels or fails."""
        document = await self._read(job.remote_document_id or "")
        action = next((a for a in document.get("flowActions") or []
                       if a.get("id") == job.remote_flow_action_id), None)
        expected = [JobStatus.PROCESSING, JobStatus.VERIFYING]
        if action is not None and action.get("status") == "Completed":
            await pipeline.repository.transition(
                job.id, expected, JobStatus.COMPLETED,
                "Completed: the Signer shows the holder's action done.", completed_at=utcnow())
            return JobResult(job_id=job.id, status=JobStatus.COMPLETED)
        if action is None or action.get("status") != "Pending" \
                or document.get("status") != "Pending":
            return await self._cancel_moved_on(pipeline, job, "the document moved on",
                                               expected=expected)
        return await pipeline._fail(job, LacunaErrorCode.FOLDER_INTERRUPTED,
                                    "Worker lost after the signing call; the Signer still shows "
                                    "the action pending (never signed twice automatically).")

    async def _read(self, document_id: str) -> dict[str, Any]:
        from activities.signer.pipeline import JobFailed

        try:
            return await self.client.document(document_id)
        except SignerRefused as exc:
            raise JobFailed(LacunaErrorCode.FOLDER_MOVED_ON,
                            f"The Signer refused to show document {document_id}: {exc}") \
                from None
        # SignerUnavailable propagates: the activity retries until the Signer answers.

    @staticmethod
    async def _cancel_moved_on(pipeline: SigningActivities, job: Job, why: str, *,
                               expected: list[JobStatus] | None = None) -> JobResult:
        message = f"Canceled: {why} before this host signed it."
        await pipeline.repository.transition(
            job.id, expected or [JobStatus.PROCESSING], JobStatus.CANCELED, message,
            code=LacunaErrorCode.FOLDER_MOVED_ON, completed_at=utcnow())
        log.info("Signer-folder job %s canceled: %s", job.id, why, extra=props(JobId=job.id))
        return JobResult(job_id=job.id, status=JobStatus.CANCELED,
                         error_code=LacunaErrorCode.FOLDER_MOVED_ON, message=message)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)

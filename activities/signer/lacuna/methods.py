"""What a signing worker does for the two Lacuna Signer methods (called from the pipeline)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from activities.signer import engine
from activities.signer.contracts.jobs import JobResult, JobStatus, SignatureFormat, SignerErrorCode
from activities.signer.contracts.lacuna import LacunaErrorCode
from activities.signer.job_steps import JobFailed, JobSteps
from activities.signer.lacuna.client import LacunaClient, SignerRefused, SignerUnavailable
from activities.signer.lacuna.cpf import cpf_of
from activities.signer.lacuna.dispatches import DispatchLog, document_name
from activities.signer.lacuna.keyless import approver_flow
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.models.lacuna import SignerDispatch
from activities.signer.profiles import certificate_spec, is_keyless
from activities.signer.signature_policy import job_policy
from shared.db.models import utcnow
from shared.heartbeat import heartbeat_forever
from shared.logs import props

log = logging.getLogger("esteira.signer.lacuna")
CONTENT_TYPES = {SignatureFormat.PADES: "application/pdf", SignatureFormat.XADES: "text/xml"}
# Signer document statuses whose flow still runs: a retry adopts such a document.
# Concluded too: a retry adopts a document the participant signed after a timeout, and
# finishes it at once, rather than asking for a second signature.
LIVE_STATUSES = {"Pending", "FlowConcluded", "Concluded"}
# How far up a retry chain a new job looks for a live document.
ANCESTOR_DEPTH = 10


def flow_of(profile: SigningProfile) -> list[dict[str, Any]]:
    """The Signer flow a dispatch creates: one action per approver when KEYLESS."""
    return approver_flow(profile) if is_keyless(profile) else profile.signer_flow


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

    async def dispatch(self, steps: JobSteps, job: Job, profile: SigningProfile,
                       staged: Path) -> JobResult:
        """Upload + create the document, then Processing -> AwaitingSigner (slot freed)."""
        if is_keyless(profile) and SignatureFormat(job.format) != SignatureFormat.PADES:
            # Approvers' signatures are checked one by one; that is done for PDF (PAdES).
            raise JobFailed(SignerErrorCode.PROFILE_INVALID,
                            f"Profile {profile.name} is KEYLESS: its approvers sign PDF files "
                            f"(PAdES) only, not {job.file_name}.")
        if not flow_of(profile):
            raise JobFailed(SignerErrorCode.PROFILE_INVALID,
                            f"Profile {profile.name} has no Signer flow.")
        dispatches = DispatchLog(steps.repository.sessions)
        # The checkpoint precedes every remote call: a worker lost past it resumes the dispatch
        # by asking the Signer (resume_dispatch); it never fails it nor creates a second one.
        checkpoint, fresh = await dispatches.start(job.id,
                                                   document_name(job.file_name, job.id))
        await steps.repository.note(job.id, "Dispatching to the Lacuna Signer.",
                                       signing_started_at=utcnow())
        return await self._dispatch(steps, job, profile, staged, checkpoint, dispatches,
                                    fresh=fresh)

    async def resume_dispatch(self, steps: JobSteps, job: Job,
                              checkpoint: SignerDispatch) -> JobResult:
        """A worker lost mid-dispatch: adopt the Signer's document, else dispatch again.

        An unreachable Signer raises SignerUnavailable: the activity retries until it answers.
        """
        # Runs before the pipeline's own heartbeat starts; an upload may take a while.
        heartbeat = asyncio.create_task(heartbeat_forever())
        try:
            profile = await steps.profile(job)
            staged = steps.storage.staging_dir(job.id) / Path(job.file_name).name
            return await self._dispatch(steps, job, profile, staged, checkpoint,
                                        DispatchLog(steps.repository.sessions))
        except JobFailed as failure:
            return await steps.fail(job, failure.code, failure.message)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _dispatch(self, steps: JobSteps, job: Job, profile: SigningProfile,
                        staged: Path, checkpoint: SignerDispatch,
                        dispatches: DispatchLog, *, fresh: bool = False) -> JobResult:
        document_id, message = await self._existing(steps, job, checkpoint, fresh=fresh)
        if document_id is None:
            document_id = await self._create(job, profile, staged, checkpoint, dispatches)
            message = f"Dispatched to the Lacuna Signer as document {document_id}."
        elif checkpoint.document_id != document_id:
            await dispatches.record(job.id, document_id=document_id)
        if not await steps.repository.transition(job.id, [JobStatus.PROCESSING],
                                                    JobStatus.AWAITING_SIGNER, message,
                                                    remote_document_id=document_id):
            # A worker thought lost but only slow got there first (or the job was cleared):
            # never fail a job the remote side may hold; the workflow follows the row.
            current = await steps.repository.get(job.id)
            status = JobStatus(current.status) if current else JobStatus.CANCELED
            return JobResult(job_id=job.id, status=status, message="dispatched elsewhere")
        await dispatches.forget(job.id)
        log.info("Job %s awaits Signer document %s", job.id, document_id,
                 extra=props(JobId=job.id, DocumentId=document_id))
        return JobResult(job_id=job.id, status=JobStatus.AWAITING_SIGNER,
                         message=document_id)

    async def _existing(self, steps: JobSteps, job: Job,
                        checkpoint: SignerDispatch, *,
                        fresh: bool) -> tuple[str | None, str]:
        """A document this job (or, still live, one its retried ancestors) already has."""
        if checkpoint.document_id is not None:
            return checkpoint.document_id, (f"Resumed the dispatch: Signer document "
                                            f"{checkpoint.document_id} was already created.")
        # The id may be lost (worker gone between the create call and the checkpoint write):
        # the job-id-bearing name finds the document. A fresh checkpoint had no remote call.
        found = [] if fresh else await self.client.find_documents(checkpoint.document_name)
        if found:
            if len(found) > 1:
                log.warning("Job %s has %d Signer documents; waiting on the first",
                            job.id, len(found), extra=props(JobId=job.id))
            return found[0]["id"], (f"Resumed the dispatch: found Signer document "
                                    f"{found[0]['id']} created before the worker was lost.")
        parent_id = job.parent_job_id
        for _ in range(ANCESTOR_DEPTH):
            if parent_id is None:
                break
            ancestor = await steps.repository.get(parent_id)
            if ancestor is None or ancestor.remote_flow_action_id is not None:
                break
            parent_id = ancestor.parent_job_id
            live = await self._live_document(ancestor)
            if live is not None:
                # A retry is a new job for the same file, not a second signature flow: the
                # participant may still be signing the first one.
                return live, (f"Adopted Signer document {live} of job {ancestor.id}, still "
                              "pending there: a retry never starts a second signature flow.")
        return None, ""

    async def _live_document(self, ancestor: Job) -> str | None:
        """An earlier job's document while its flow is still running on the Signer."""
        document_id = ancestor.remote_document_id
        if document_id is None:
            named = await self.client.find_documents(document_name(ancestor.file_name,
                                                                   ancestor.id))
            document_id = named[0]["id"] if named else None
        if document_id is None:
            return None
        try:
            document = await self.client.document(document_id)
        except SignerRefused:
            return None  # deleted on the Signer: nothing to adopt
        return document_id if document.get("status") in LIVE_STATUSES else None

    async def _create(self, job: Job, profile: SigningProfile, staged: Path,
                      checkpoint: SignerDispatch, dispatches: DispatchLog) -> str:
        """Upload (or reuse the checkpoint's upload) and create the document; its id is stored
        before anything else happens."""
        upload_id = checkpoint.upload_id
        for attempt in range(2):
            if upload_id is None:
                upload_id = await self._upload(job, staged)
                await dispatches.record(job.id, upload_id=upload_id)
            try:
                # SignerUnavailable propagates: the document may exist; the retry will ask.
                document_id = await self.client.create_document(
                    upload_id=upload_id, name=job.file_name, flow=flow_of(profile),
                    display_name=checkpoint.document_name,
                    content_type=CONTENT_TYPES.get(SignatureFormat(job.format),
                                                   "application/octet-stream"))
            except SignerRefused as exc:
                # A 4xx created nothing. An upload kept from a lost worker may have expired
                # on the Signer: upload once more before giving up.
                if attempt == 0 and checkpoint.upload_id is not None:
                    upload_id = None
                    continue
                raise JobFailed(LacunaErrorCode.DISPATCH_FAILED,
                                f"Could not dispatch to the Lacuna Signer: {exc}") from None
            await dispatches.record(job.id, document_id=document_id)
            return document_id
        raise AssertionError("unreachable")

    async def _upload(self, job: Job, staged: Path) -> str:
        """Upload the staged copy; failing here is safe: no document exists for this job."""
        try:
            data = await asyncio.to_thread(staged.read_bytes)
        except FileNotFoundError:
            raise JobFailed(LacunaErrorCode.DISPATCH_FAILED,
                            f"The staged copy {staged} is gone; nothing was created on the "
                            "Lacuna Signer.") from None
        try:
            return await self.client.upload(data, job.file_name)
        except (SignerUnavailable, SignerRefused) as exc:
            raise JobFailed(LacunaErrorCode.DISPATCH_FAILED,
                            f"Could not dispatch to the Lacuna Signer: {exc}") from None

    async def sign_folder_document(self, steps: JobSteps, job: Job,
                                   profile: SigningProfile) -> JobResult:
        """Re-read the document; sign only while the holder's action is still pending."""
        if job.remote_document_id is None or job.remote_flow_action_id is None:
            raise JobFailed(SignerErrorCode.PROFILE_INVALID,
                            f"Profile {profile.name} signs documents of a Signer folder, not "
                            "files; route files to another profile.")
        document_id, action_id = job.remote_document_id, job.remote_flow_action_id
        cpf = await asyncio.to_thread(holder_cpf, profile)
        document = await self._read(document_id)
        why = holder_action(document, action_id, cpf)
        if why is not None:
            return await self._cancel_moved_on(steps, job, why)
        staged_dir = steps.storage.staging_dir(job.id)
        staged = staged_dir / Path(job.file_name).name
        artifact = staged_dir / f"signed-{Path(job.file_name).name}"
        try:
            data = await self.client.content(document_id, "Signatures")
        except (SignerUnavailable, SignerRefused) as exc:
            raise JobFailed(LacunaErrorCode.DOWNLOAD_FAILED, f"Could not download: {exc}") \
                from None
        await asyncio.to_thread(_write, staged, data)
        policy = await job_policy(profile, SignatureFormat(job.format))
        await steps.repository.note(job.id, "Signing the Signer document's current version.",
                                       signing_started_at=utcnow())
        await steps.in_pool(engine.sign, engine.SignRequest(
            certificate=certificate_spec(profile), fmt=SignatureFormat(job.format),
            staged=str(staged), artifact=str(artifact), policy=policy))
        await steps.transition(job, JobStatus.PROCESSING, JobStatus.VERIFYING,
                                   "Signed; verifying, then handing it to the Signer.")
        await steps.in_pool(engine.verify_and_seal, engine.VerifyRequest(
            fmt=SignatureFormat(job.format), staged=str(staged), artifact=str(artifact),
            trust_roots=tuple(profile.trust_roots), validate_chain=profile.validate_certificate,
            skip=not profile.verify, policy=policy))
        try:
            upload_id = await self.client.upload(await asyncio.to_thread(artifact.read_bytes),
                                                 job.file_name)
            await self.client.submit_signature(document_id, action_id, upload_id=upload_id,
                                               identifier=cpf or "")
        except (SignerUnavailable, SignerRefused) as exc:
            raise JobFailed(LacunaErrorCode.FOLDER_UPLOAD_FAILED,
                            f"The Signer did not take the signature: {exc}") from None
        await steps.transition(job, JobStatus.VERIFYING, JobStatus.COMPLETED,
                                   "Completed: signature handed to the Lacuna Signer.",
                                   completed_at=utcnow())
        await asyncio.to_thread(steps.storage.remove_staging, job.id)
        return JobResult(job_id=job.id, status=JobStatus.COMPLETED)

    async def after_interrupt(self, steps: JobSteps, job: Job) -> JobResult:
        """A lost worker past the signing call: the Signer's answer completes, cancels or fails."""
        document = await self._read(job.remote_document_id or "")
        action = next((a for a in document.get("flowActions") or []
                       if a.get("id") == job.remote_flow_action_id), None)
        expected = [JobStatus.PROCESSING, JobStatus.VERIFYING]
        if action is not None and action.get("status") == "Completed":
            await steps.repository.transition(
                job.id, expected, JobStatus.COMPLETED,
                "Completed: the Signer shows the holder's action done.", completed_at=utcnow())
            return JobResult(job_id=job.id, status=JobStatus.COMPLETED)
        if action is None or action.get("status") != "Pending" \
                or document.get("status") != "Pending":
            return await self._cancel_moved_on(steps, job, "the document moved on",
                                               expected=expected)
        return await steps.fail(job, LacunaErrorCode.FOLDER_INTERRUPTED,
                                    "Worker lost after the signing call; the Signer still shows "
                                    "the action pending (never signed twice automatically).")

    async def _read(self, document_id: str) -> dict[str, Any]:
        try:
            return await self.client.document(document_id)
        except SignerRefused as exc:
            raise JobFailed(LacunaErrorCode.FOLDER_MOVED_ON,
                            f"The Signer refused to show document {document_id}: {exc}") \
                from None
        # SignerUnavailable propagates: the activity retries until the Signer answers.

    @staticmethod
    async def _cancel_moved_on(steps: JobSteps, job: Job, why: str, *,
                               expected: list[JobStatus] | None = None) -> JobResult:
        message = f"Canceled: {why} before this host signed it."
        await steps.repository.transition(
            job.id, expected or [JobStatus.PROCESSING], JobStatus.CANCELED, message,
            code=LacunaErrorCode.FOLDER_MOVED_ON, completed_at=utcnow())
        log.info("Signer-folder job %s canceled: %s", job.id, why, extra=props(JobId=job.id))
        return JobResult(job_id=job.id, status=JobStatus.CANCELED,
                         error_code=LacunaErrorCode.FOLDER_MOVED_ON, message=message)


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)

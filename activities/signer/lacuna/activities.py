"""The AwaitingSigner side: status checks, the finishing tail and the remote cancel."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path

from temporalio import activity

from activities.signer.contracts.jobs import JobResult, JobStatus, SignatureFormat
from activities.signer.contracts.lacuna import (
    CancelRemoteInput,
    CheckRemoteInput,
    FinishRemoteInput,
    LacunaErrorCode,
    RemoteState,
    RemoteStatus,
)
from activities.signer.contracts.names import (
    LACUNA_CANCEL_REMOTE_ACTIVITY,
    LACUNA_CHECK_ACTIVITY,
    LACUNA_FINISH_ACTIVITY,
)
from activities.signer.job_steps import JobFailed
from activities.signer.lacuna.client import LacunaClient, SignerRefused, SignerUnavailable
from activities.signer.lacuna.keyless import missing_signatures, quorum_of, tally
from activities.signer.lacuna.keyless_veto import veto_refused
from activities.signer.pipeline import SigningActivities
from activities.signer.profiles import is_keyless, output_name
from activities.signer.storage import Fingerprint
from shared.heartbeat import heartbeat_forever
from shared.logs import props
from shared.settings import SignerSettings

log = logging.getLogger("esteira.signer.lacuna")
# Remote outcomes that end a waiting job as Failed, with the code each one gets.
REMOTE_FAILURES = {"Refused": LacunaErrorCode.REFUSED, "Expired": LacunaErrorCode.EXPIRED,
                   "Canceled": LacunaErrorCode.CANCELED_REMOTELY}


class AwaitingSignerActivities:
    """Activities of the AwaitingSigner wait; they run on the (never paused) jobs queue."""

    def __init__(self, pipeline: SigningActivities, client: LacunaClient,
                 settings: SignerSettings) -> None:
        self.pipeline = pipeline
        self.client = client
        self.settings = settings

    @activity.defn(name=LACUNA_CHECK_ACTIVITY)
    async def check(self, request: CheckRemoteInput) -> RemoteStatus:
        """Where the job's document stands; an unreachable Signer reads as still waiting."""
        job = await self.pipeline.repository.get(request.job_id)
        timing = {"poll_seconds": self.settings.poll_interval_seconds,
                  "max_wait_seconds": self.settings.max_wait_seconds}
        if job is None or job.status != JobStatus.AWAITING_SIGNER:
            return RemoteStatus(state=RemoteState.GONE, remote_status=job and job.status,
                                document_id=job and job.remote_document_id, **timing)
        document_id = job.remote_document_id
        try:
            document = await self.client.document(document_id or "")
        except (SignerUnavailable, SignerRefused) as exc:
            # The remote side holds the work: an outage or a bad answer never fails the job.
            log.warning("Signer status of job %s unavailable: %s", job.id, exc,
                        extra=props(JobId=job.id, DocumentId=document_id))
            return RemoteStatus(state=RemoteState.WAITING, document_id=document_id,
                                remote_status="unreachable", **timing)
        status = str(document.get("status"))
        profile = await self.pipeline.repository.profile(job.profile_name or "")
        if profile is not None and is_keyless(profile):
            votes = tally(document)
            if votes.refused_by is not None:
                status = "Refused"  # a veto, whatever the quorum count
            elif len(votes.signed) >= quorum_of(profile):
                status = "Concluded"  # the quorum signed; the others need not
        if status == "Concluded":
            state = RemoteState.CONCLUDED
        elif status in REMOTE_FAILURES:
            state = RemoteState.FAILED
        else:
            state = RemoteState.WAITING
        return RemoteStatus(state=state, document_id=document_id, remote_status=status,
                            **timing)

    @activity.defn(name=LACUNA_FINISH_ACTIVITY)
    async def finish(self, request: FinishRemoteInput) -> JobResult:
        """Fail the job with the remote outcome, or download and run the shared tail."""
        pipeline = self.pipeline
        job = await pipeline.repository.get(request.job_id)
        if job is None or job.status not in (JobStatus.AWAITING_SIGNER, JobStatus.VERIFYING):
            status = JobStatus(job.status) if job else JobStatus.CANCELED
            return JobResult(job_id=request.job_id, status=status, message="not awaiting")
        if request.failure_code == LacunaErrorCode.REFUSED \
                and job.status == JobStatus.AWAITING_SIGNER:
            profile = await pipeline.repository.profile(job.profile_name or "")
            if profile is not None and is_keyless(profile):
                # An approver's refusal is a veto, as for approvals: Canceled, file returned.
                refused_by = await self._refused_by(job.remote_document_id)
                return await veto_refused(pipeline, job, profile, refused_by)
        if request.failure_code:
            return await pipeline.fail(job, request.failure_code,
                                        request.failure_message or request.failure_code)
        heartbeat = asyncio.create_task(heartbeat_forever())
        try:
            return await self._download_and_seal(job)
        except JobFailed as failure:
            return await pipeline.fail(job, failure.code, failure.message)
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _download_and_seal(self, job) -> JobResult:
        pipeline = self.pipeline
        profile = await pipeline.profile(job)
        staged = pipeline.storage.staging_dir(job.id) / Path(job.file_name).name
        artifact = staged.with_name(output_name(SignatureFormat(job.format), job.file_name,
                                                encrypted=profile.encrypt))
        try:
            data = await self.client.content(job.remote_document_id or "", "Signatures")
        except SignerUnavailable:
            raise  # retried by the activity's policy; nothing was changed yet
        except SignerRefused as exc:
            raise JobFailed(LacunaErrorCode.DOWNLOAD_FAILED,
                            f"Could not download the signed document: {exc}") from None
        await asyncio.to_thread(artifact.write_bytes, data)
        if is_keyless(profile):
            await self._approvers_signed(job, profile, data)
            # The quorum signed: whoever has not yet need not (before the tail, which may fail).
            await self._close_flow(job)
        if job.status == JobStatus.AWAITING_SIGNER:
            await pipeline.transition(job, JobStatus.AWAITING_SIGNER, JobStatus.VERIFYING,
                                       f"Concluded on the Lacuna Signer; downloaded "
                                       f"{len(data)} bytes, verifying.")
        fingerprint = Fingerprint(job.input_size or 0, job.input_sha256 or "")
        return await pipeline.seal_and_promote(job, profile, staged, artifact, fingerprint)

    async def _refused_by(self, document_id: str | None) -> str:
        """The approver whose action the Signer shows Refused (their name)."""
        try:
            return tally(await self.client.document(document_id or "")).refused_by \
                or "an approver"
        except (SignerUnavailable, SignerRefused):
            return "an approver"

    async def _approvers_signed(self, job, profile, data: bytes) -> None:
        """KEYLESS: each approver whose action is done signed with their own certificate."""
        try:
            document = await self.client.document(job.remote_document_id or "")
        except SignerRefused as exc:
            raise JobFailed(LacunaErrorCode.DOWNLOAD_FAILED,
                            f"Could not read the signed document: {exc}") from None
        try:
            why = await asyncio.to_thread(missing_signatures, profile,
                                          tally(document).signed, data)
        except Exception as exc:  # an unreadable PDF is the document's fault, not ours
            why = f"the signed document could not be read ({type(exc).__name__})"
        if why is not None:
            raise JobFailed(LacunaErrorCode.APPROVER_SIGNATURE_MISSING,
                            f"Verification failed: {why}.")

    async def _close_flow(self, job) -> None:
        """Quorum below the approver count: the rest need not sign; cancel, best effort."""
        try:
            document = await self.client.document(job.remote_document_id or "")
            if document.get("status") == "Pending":
                await self.client.cancel(job.remote_document_id or "",
                                         "Quorum reached; signed by Esteira's approvers.")
        except (SignerUnavailable, SignerRefused) as exc:
            log.warning("Could not close the Signer flow of job %s: %s", job.id, exc,
                        extra=props(JobId=job.id))

    @activity.defn(name=LACUNA_CANCEL_REMOTE_ACTIVITY)
    async def cancel_remote(self, request: CancelRemoteInput) -> None:
        """After the local Canceled (or a clear), cancel the document; failures only logged."""
        job = await self.pipeline.repository.get(request.job_id)
        if job is not None and job.status != JobStatus.CANCELED:
            return
        document_id = request.document_id or (job.remote_document_id if job else None)
        if document_id is None:
            return  # canceled before dispatch: nothing exists remotely
        try:
            await self.client.cancel(document_id, "Canceled by the Esteira operator.")
        except (SignerUnavailable, SignerRefused) as exc:
            log.warning("Remote cancel of Signer document %s (job %s) failed: %s; the local "
                        "cancel stands", document_id, request.job_id, exc,
                        extra=props(JobId=request.job_id, DocumentId=document_id))
            return
        log.info("Signer document %s of job %s canceled remotely", document_id,
                 request.job_id, extra=props(JobId=request.job_id))

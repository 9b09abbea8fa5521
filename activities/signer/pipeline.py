"""The signing activity: claim, stage, sign, verify, encrypt, promote, release the input."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
import ssl
from concurrent.futures import Executor
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.signer import engine
from activities.signer.approvals.presign import PreSigningChecks, PreSigningFailure
from activities.signer.archive import ArchiveRegistry
from activities.signer.contracts.jobs import (
    JobResult,
    JobStatus,
    ProcessJobInput,
    SignatureFormat,
    SignerErrorCode,
)
from activities.signer.contracts.lacuna import ProfileMethod
from activities.signer.contracts.names import PROCESS_JOB_ACTIVITY
from activities.signer.job_steps import JobFailed, JobSteps
from activities.signer.lacuna.dispatches import DispatchLog
from activities.signer.lacuna.methods import RemoteMethods
from activities.signer.level_config import tsa_endpoints
from activities.signer.metrics import IN_FLIGHT, INPUTS_DIVERGED, JOBS_FINISHED, STAGE_SECONDS
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.profiles import certificate_spec, output_name
from activities.signer.repository import Claim, JobRepository, LoadedJob
from activities.signer.signature_policy import job_policy
from activities.signer.storage import Fingerprint, StorageError, StorageTree, storage_failure
from shared.db.models import OperationalEvent, utcnow
from shared.heartbeat import heartbeat_forever
from shared.logs import props

log = logging.getLogger("esteira.signer.pipeline")
INTERRUPTED_MESSAGE = ("Worker lost after the signing call may have happened; marked as failed "
                       "during recovery (never signed twice automatically).")
# How long a job whose claim met the pause waits before its next try (a paused worker doesn't
# poll, so the try then waits for the resume without costing anything).
PAUSED_RETRY_DELAY = timedelta(seconds=5)
# OSErrors of the network (the store, a remote service), not of a job's file: retried. Only
# some of them are ConnectionError: a DNS failure, a TLS error or an unreachable host aren't.
_NETWORK_ERRORS = (ConnectionError, TimeoutError, socket.gaierror, socket.herror, ssl.SSLError)
_NETWORK_ERRNOS = frozenset({errno.EHOSTUNREACH, errno.EHOSTDOWN, errno.ENETUNREACH,
                             errno.ENETDOWN, errno.ENETRESET, errno.ENOTCONN,
                             errno.EADDRNOTAVAIL})


@dataclass(frozen=True)
class _Note:
    """A history row not written yet, with the job fields it sets."""

    message: str
    fields: dict[str, object]


class SigningActivities(JobSteps):
    """The signer's side effects for one job; dependencies come from the worker's main()."""

    def __init__(self, repository: JobRepository, storage: StorageTree, pool: Executor, *,
                 instance_id: str, encryption_key: bytes | None,
                 remote: RemoteMethods | None = None,
                 checks: PreSigningChecks | None = None,
                 archive: ArchiveRegistry | None = None) -> None:
        super().__init__(repository, storage, pool, encryption_key=encryption_key)
        self.instance_id = instance_id
        # Where B-LTA outputs are kept and renewed (archive/ beside output/).
        self.archive = archive or ArchiveRegistry(repository.sessions, storage.root)
        # The Lacuna Signer methods (LacunaSigner, SignerFolder); None: not configured here.
        self.remote = remote
        self.checks = checks or PreSigningChecks(repository, storage,
                                                 encryption_key=encryption_key)

    @activity.defn(name=PROCESS_JOB_ACTIVITY)
    async def process_job(self, request: ProcessJobInput) -> JobResult:
        """Run a job from Queued to a terminal state; safe to retry after a lost worker."""
        # The job, its approval and its profile in one read: a claim needs all three.
        loaded = await self.repository.load(request.job_id)
        if loaded is None:
            log.warning("Job %s no longer exists (cleared); nothing to do", request.job_id,
                        extra=props(JobId=request.job_id))
            return JobResult(job_id=request.job_id, status=JobStatus.CANCELED,
                             message="job record removed")
        job = loaded.job
        if (vetoed := await self.checks.vetoed_in_queue(job, loaded.approval)) is not None:
            return vetoed  # rejected after its release but before any claim: an ordinary veto
        if JobStatus(job.status) in (JobStatus.PROCESSING, JobStatus.VERIFYING):
            try:
                interrupted = await self._take_over(job)
            except (JobFailed, PreSigningFailure) as failure:
                # A takeover that can't go on ends the job; retrying it would change nothing.
                return await self.fail(job, failure.code, failure.message)
            if interrupted is not None:
                return interrupted
        elif not await self._claim(job):
            current = await self.repository.get(job.id)
            status = JobStatus(current.status) if current else JobStatus.CANCELED
            return JobResult(job_id=job.id, status=status, message="not claimed")
        heartbeat = asyncio.create_task(heartbeat_forever())
        in_flight = IN_FLIGHT.labels(format=job.format)
        in_flight.inc()
        try:
            with STAGE_SECONDS.labels(stage="total").time():
                return await self._run(loaded)
        except (JobFailed, PreSigningFailure) as failure:
            return await self.fail(job, failure.code, failure.message)
        except OSError as exc:
            if isinstance(exc, _NETWORK_ERRORS) or exc.errno in _NETWORK_ERRNOS:
                raise  # the store or a remote service: infrastructure, retried
            # A file step of this job failed (a name too long, a full disk): its own error,
            # not a lost worker. Left to a retry, it would be read as an interrupted signing.
            own = storage_failure(exc, exc.filename or "a file of the job")
            return await self.fail(job, own.code, own.message)
        finally:
            in_flight.dec()
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat

    async def _claim(self, job: Job) -> bool:
        """Queued -> Processing, atomically against a concurrent cancel and a pause."""
        claim = await self.repository.claim(
            job.id, f"Worker started job ({self.instance_id}).", started_at=utcnow(),
            instance_id=self.instance_id)
        if claim is Claim.PAUSED:
            # A poll that was open when the pause was answered: hand the task back. The retry
            # waits out a delay, and while paused no worker polls, so the job sits idle.
            raise ApplicationError(f"Job {job.id} not claimed: the pipeline is paused.",
                                   type="PipelinePaused", next_retry_delay=PAUSED_RETRY_DELAY)
        return claim is Claim.CLAIMED

    async def _take_over(self, job: Job) -> JobResult | None:
        """A retry after a lost worker: requeue before the signing call, fail after it."""
        event = OperationalEvent(
            domain="signer", type="JobTakenOver", actor=self.instance_id,
            message=f"Job {job.id} taken over from {job.instance_id} by {self.instance_id}.",
            properties={"jobId": job.id, "from": job.instance_id, "to": self.instance_id,
                        "signingStarted": job.signing_started_at is not None})
        if job.signing_started_at is None:
            await self.repository.note(job.id, "Taken over before the signing call; restarting.",
                                       event=event, instance_id=self.instance_id)
            return None
        await self.repository.note(job.id, "Taken over after the signing call.", event=event)
        if job.remote_flow_action_id is not None and self.remote is not None:
            # A Signer document has no file to look at: the Signer says how it ended.
            return await self.remote.after_interrupt(self, job)
        checkpoint = await DispatchLog(self.repository.sessions).get(job.id)
        if checkpoint is not None:
            # Lost mid-dispatch (LacunaSigner): the Signer may hold a document; ask, never fail.
            if self.remote is None:
                raise RuntimeError(f"Job {job.id} was dispatching to the Lacuna Signer; this "
                                   "worker has no Signer:* settings, another one resumes it.")
            return await self.remote.resume_dispatch(self, job, checkpoint)
        return await self.fail(job, SignerErrorCode.JOB_INTERRUPTED, INTERRUPTED_MESSAGE)

    async def _run(self, loaded: LoadedJob) -> JobResult:
        job = loaded.job
        profile = self.usable_profile(job, loaded.profile)
        if profile.method == ProfileMethod.SIGNER_FOLDER:
            return await self._remote().sign_folder_document(self, job, profile)
        source = Path(job.original_path)
        # Only a hold creates the approval row, and only the claim's holder holds: a job that
        # had none when it was read has none now, and no held copy to resume on.
        held = None if loaded.approval is None else await self.checks.held_copy(job)
        staged_note: _Note | None = None
        if held is not None:
            staged, fingerprint = held
        else:
            staged, fingerprint, staged_note = await self._stage(job, source)
            if (profile.method != ProfileMethod.LOCAL
                    or not self.checks.writes_nothing(job, profile)):
                # Something before the signature reads or keeps the fingerprint (a hold, a
                # dispatch) or may end the job: recorded now, on its own.
                await self.repository.note(job.id, staged_note.message, **staged_note.fields)
                staged_note = None
        # CNAB240 dates, the approval hold, and after a release the veto and the hash check.
        waiting = await self.checks.before_signing(job, profile, staged, fingerprint,
                                                   resumed=held is not None)
        if waiting is not None:
            return waiting
        if profile.method == ProfileMethod.LACUNA_SIGNER:
            return await self._remote().dispatch(self, job, profile, staged)
        fmt = SignatureFormat(job.format)
        artifact = staged.with_name(output_name(fmt, job.file_name,
                                                encrypted=profile.encrypt))
        # The checkpoint is written before the call: a worker lost after this point is never
        # allowed to sign again on its own. A staged copy nothing looked at yet is recorded in
        # the same transaction (its own history row first): one commit instead of two.
        earlier = {} if staged_note is None else {"preceded_by": staged_note.message,
                                                  **staged_note.fields}
        policy = await job_policy(profile, fmt)
        await self.repository.note(job.id, f"Signing ({fmt.value}).", signing_started_at=utcnow(),
                                   **earlier)
        timestamp = profile.timestamp or {}
        signed = await self.in_pool(engine.sign, engine.SignRequest(
            certificate=certificate_spec(profile), fmt=fmt, staged=str(staged),
            artifact=str(artifact), policy=policy, level=profile.signature_level,
            tsa=tsa_endpoints(profile.timestamp),
            tsa_hash_algorithm=timestamp.get("hash_algorithm", "sha256"),
            trust_roots=tuple(profile.trust_roots),
            revocation_timeout=profile.revocation_timeout_seconds))
        # Above B-B the history says which TSA answered and what revocation data went in.
        how = f" ({signed.message})" if signed.message else ""
        await self.transition(job, JobStatus.PROCESSING, JobStatus.VERIFYING,
                               f"Signed{how}; verifying." if profile.verify
                               else f"Signed{how}; verification disabled by the profile.")
        return await self.seal_and_promote(job, profile, staged, artifact, fingerprint,
                                           archive_expiry=signed.archive_expiry)

    async def seal_and_promote(self, job: Job, profile: SigningProfile, staged: Path,
                               artifact: Path, fingerprint: Fingerprint, *,
                               archive_expiry: str | None = None) -> JobResult:
        """Verify -> optionally encrypt -> promote -> release the input (a Verifying job).

        A B-LTA output is also kept in the archive, whose schedule renews it.
        """
        await self.in_pool(engine.verify_and_seal, engine.VerifyRequest(
            fmt=SignatureFormat(job.format), staged=str(staged), artifact=str(artifact),
            trust_roots=tuple(profile.trust_roots), validate_chain=profile.validate_certificate,
            skip=not profile.verify,
            policy=await job_policy(profile, SignatureFormat(job.format)),
            encryption_key=self.encryption_key if profile.encrypt else None))
        output = await self._promote(job, artifact)
        if archive_expiry is not None:
            await self.archive.register(output=output, job_id=job.id, profile=profile.name,
                                        level=profile.signature_level,
                                        expires_at=datetime.fromisoformat(archive_expiry))
        return await self._complete(job, profile, Path(job.original_path), fingerprint, output)

    def _remote(self) -> RemoteMethods:
        if self.remote is None:
            raise JobFailed(SignerErrorCode.PROFILE_DEGRADED,
                            "The profile signs through the Lacuna Signer, but this worker has "
                            "no Signer:* settings.")
        return self.remote

    async def _stage(self, job: Job, source: Path) -> tuple[Path, Fingerprint, _Note]:
        """Copy the input into staging; the history row saying so is the caller's to write."""
        try:
            with STAGE_SECONDS.labels(stage="stage").time():
                staged, fingerprint = await asyncio.to_thread(self.storage.stage, job.id, source)
        except StorageError as exc:
            raise JobFailed(exc.code, f"Could not stage {source}: {exc.message}") from None
        return staged, fingerprint, _Note(
            f"Staged {fingerprint.size} bytes (sha256 {fingerprint.sha256}).",
            {"input_size": fingerprint.size, "input_sha256": fingerprint.sha256})

    async def _promote(self, job: Job, artifact: Path) -> Path:
        try:
            with STAGE_SECONDS.labels(stage="promote").time():
                return await asyncio.to_thread(self.storage.promote, job.id, artifact,
                                               artifact.name)
        except StorageError as exc:
            raise JobFailed(exc.code, exc.message) from None

    async def _complete(self, job: Job, profile: SigningProfile, source: Path,
                        fingerprint: Fingerprint, output: Path) -> JobResult:
        check = await asyncio.to_thread(self.storage.delete_input_if_unchanged, source,
                                        fingerprint)
        event = None
        if not check.deleted and not check.gone:
            INPUTS_DIVERGED.labels(profile=profile.name).inc()
            event = OperationalEvent(
                domain="signer", type="InputDiverged", actor=self.instance_id,
                message=f"Input {source} diverged from the staged copy of job {job.id}; "
                        f"it was left in place: {check.reason}",
                properties={"jobId": job.id, "code": SignerErrorCode.JOB_INPUT_DIVERGED,
                            "path": str(source), "folder": job.folder})
            await self.repository.note(job.id, f"Input diverged: {check.reason}",
                                       code=SignerErrorCode.JOB_INPUT_DIVERGED)
        # The event is written with the terminal transition: the watcher that takes the path
        # back reads it only once the job has ended.
        await self.transition(job, JobStatus.VERIFYING, JobStatus.COMPLETED, "Completed.",
                               event=event, output_path=str(output), completed_at=utcnow())
        await asyncio.to_thread(self.storage.remove_staging, job.id)
        JOBS_FINISHED.labels(status=JobStatus.COMPLETED.value, profile=profile.name,
                             format=job.format).inc()
        log.info("Job %s completed: %s", job.id, output,
                 extra=props(JobId=job.id, Format=job.format, Output=str(output)))
        return JobResult(job_id=job.id, status=JobStatus.COMPLETED, output_path=str(output))

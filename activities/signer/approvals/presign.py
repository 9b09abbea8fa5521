"""Around the claim and before the signing call: a veto that beat the claim, CNAB240 dates,
the approval hold and, after a release, a late veto and the held copy's hash."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from sqlalchemy import delete

from activities.signer import cnab240
from activities.signer.approvals.returns import return_rejected
from activities.signer.approvals.store import ApprovalStore
from activities.signer.approvals.veto import veto
from activities.signer.contracts.approvals import ApprovalErrorCode, ApprovalState
from activities.signer.contracts.jobs import JobResult, JobStatus, SignerErrorCode
from activities.signer.models.approvals import Cnab240Line, JobApproval
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.profiles import is_keyless
from activities.signer.repository import JobRepository
from activities.signer.storage import Fingerprint, StorageTree, fingerprint_of
from shared.db.models import OperationalEvent

RESUMABLE = (ApprovalState.RELEASED, ApprovalState.SEALED, ApprovalState.REJECTED)


class PreSigningFailure(Exception):
    """A check refused the job before the signing call; it ends Failed with `code`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class PreSigningChecks:
    """The steps every claim runs before signing, first claim or after an approval wait."""

    def __init__(self, repository: JobRepository, storage: StorageTree, *,
                 encryption_key: bytes | None, approvals: ApprovalStore | None = None,
                 today: cnab240.Today = cnab240.today_in_sao_paulo) -> None:
        self.repository = repository
        self.storage = storage
        self.encryption_key = encryption_key
        self.approvals = approvals or ApprovalStore(repository.sessions)
        # Injectable so tests can move "today" without touching the clock.
        self.today = today

    async def vetoed_in_queue(self, job: Job, approval: JobApproval | None) -> JobResult | None:
        """A released job rejected before any claim: not claimed, Canceled like any veto
        (`approval`: the job's approval row, read with the job)."""
        if job.status != JobStatus.QUEUED:
            return None
        if approval is None or approval.state != ApprovalState.REJECTED:
            return None
        # Only a rejection after the claim is a failure (`_seal`); this one is an ordinary veto.
        return await veto(self.approvals, self.repository, self.storage, job.id,
                          held_in=JobStatus.QUEUED, encryption_key=self.encryption_key)

    async def held_copy(self, job: Job) -> tuple[Path, Fingerprint] | None:
        """The staged copy a released job resumes on (never a fresh copy of the input)."""
        approval = await self.approvals.get(job.id)
        if approval is None or approval.state not in RESUMABLE:
            return None
        return Path(approval.staged_path), Fingerprint(job.input_size, job.input_sha256)

    @staticmethod
    def writes_nothing(job: Job, profile: SigningProfile) -> bool:
        """`before_signing` of a freshly staged job neither writes, waits nor fails."""
        return not profile.approval and not cnab240.is_payment_file(job.file_name)

    async def before_signing(self, job: Job, profile: SigningProfile, staged: Path,
                             fingerprint: Fingerprint, *, resumed: bool) -> JobResult | None:
        """None to go on signing; a result when the job now waits; PreSigningFailure to fail."""
        if resumed:
            await self._seal(job, profile, staged, fingerprint)
        await self._check_payment_dates(job, profile, staged)
        if resumed:
            await self._same_content(job, staged)
            return None
        if not profile.approval or is_keyless(profile):
            # KEYLESS: the approval block names the signers; they decide at the Lacuna Signer.
            return None
        if not await self.approvals.hold(job, profile, staged, fingerprint):
            raise PreSigningFailure(SignerErrorCode.JOB_INTERRUPTED,
                                    "Job left Processing while this worker held it.")
        # The staged copy is the approved one: read-only for the whole wait (a local lock
        # fences only our own processes; the hash comparison before signing is the guard).
        os.chmod(staged, 0o444)
        return JobResult(job_id=job.id, status=JobStatus.AWAITING_APPROVAL,
                         message="awaiting approval")

    async def _seal(self, job: Job, profile: SigningProfile, staged: Path,
                    fingerprint: Fingerprint) -> None:
        if await self.approvals.mark(job.id, [ApprovalState.RELEASED], ApprovalState.SEALED):
            return
        approval = await self.approvals.get(job.id)
        if approval is not None and approval.state == ApprovalState.SEALED:
            return  # a worker lost before the signing call; this one takes over
        rejection = await self.approvals.rejection(job.id)
        who = f"{rejection.approver}: {rejection.reason}" if rejection else "an approver"
        where = "The file was already returned by an earlier attempt."
        if staged.exists():  # a retry after the return goes straight to the failure
            outcome = await asyncio.to_thread(
                return_rejected, self.storage, job.id, staged, Path(job.original_path),
                fingerprint, encryption_key=self.encryption_key if profile.encrypt else None)
            where = outcome.describe()
            if outcome.returned is not None:
                await self.repository.note(job.id, where, output_path=str(outcome.returned))
        raise PreSigningFailure(ApprovalErrorCode.REJECTED,
                                f"Rejected by {who} after a worker claimed the job. {where}")

    async def _check_payment_dates(self, job: Job, profile: SigningProfile,
                                   staged: Path) -> None:
        if not cnab240.is_payment_file(job.file_name):
            return
        data = await asyncio.to_thread(staged.read_bytes)
        try:
            parsed = cnab240.parse(data)
        except cnab240.Cnab240Error as exc:
            raise PreSigningFailure(ApprovalErrorCode.CNAB240_MALFORMED,
                                    f"{job.file_name} is not a CNAB240 file: {exc.message}."
                                    ) from None
        await self._store_lines(job.id, parsed)
        today = self.today()
        passed = cnab240.passed_payment(parsed, today)
        if passed is None:
            return
        message = (f"Payment date {passed.payment_date:%d/%m/%Y} on line {passed.line_no} "
                   f"is before today ({today:%d/%m/%Y}, America/Sao_Paulo).")
        properties = {"jobId": job.id, "line": passed.line_no,
                      "paymentDate": passed.payment_date.isoformat(), "profile": profile.name}
        if not profile.check_cnab240_payment_dates:
            await self.repository.note(job.id, f"{message} Signed anyway: "
                                       "CheckCnab240PaymentDates is off.", event=OperationalEvent(
                                           domain="signer", type="Cnab240PaymentDateCheckSkipped",
                                           message=f"Job {job.id}: {message}",
                                           properties=properties))
            return
        await self.repository.note(job.id, message, event=OperationalEvent(
            domain="signer", type="Cnab240PaymentDatePassed",
            message=f"Job {job.id} ('{job.file_name}'): {message}", properties=properties))
        raise PreSigningFailure(ApprovalErrorCode.CNAB240_PAYMENT_DATE_PASSED, message)

    async def _store_lines(self, job_id: str, parsed: cnab240.Cnab240File) -> None:
        async with self.repository.sessions() as session:
            await session.exec(delete(Cnab240Line).where(Cnab240Line.job_id == job_id))
            session.add_all([Cnab240Line(
                job_id=job_id, line_no=r.line_no, record_type=r.record_type, segment=r.segment,
                movement=r.movement, payment_date=r.payment_date, amount_cents=r.amount_cents)
                for r in parsed.records])
            await session.commit()

    async def _same_content(self, job: Job, staged: Path) -> None:
        approval = await self.approvals.get(job.id)
        try:
            actual = await asyncio.to_thread(fingerprint_of, staged)
        except OSError:
            raise PreSigningFailure(ApprovalErrorCode.CONTENT_CHANGED,
                                    f"The staged copy {staged} is gone; not signed.") from None
        if actual.sha256 != approval.staged_sha256:
            raise PreSigningFailure(
                ApprovalErrorCode.CONTENT_CHANGED,
                f"The staged copy changed during the approval wait (sha256 "
                f"{approval.staged_sha256[:12]}… -> {actual.sha256[:12]}…); not signed.")

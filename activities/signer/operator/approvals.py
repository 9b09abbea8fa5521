"""Approvers' decisions and the reads of a job's approval step (snapshot, CNAB240, preview)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import select
from temporalio.client import Client

from activities.signer.approvals.decisions import Approver, authenticate, decide
from activities.signer.contracts.approvals import Decision
from activities.signer.contracts.jobs import SignerErrorCode
from activities.signer.models.approvals import ApprovalDecision, Cnab240Line, JobApproval
from activities.signer.models.jobs import Job
from activities.signer.operator.approval_preview import first_page_png
from activities.signer.operator.errors import refuse
from shared.db.engine import Sessions
from shared.temporal import TemporalHandle


@dataclass(frozen=True)
class ApprovalSnapshot:
    """A held job, its approval step and the decisions so far (oldest first)."""

    job: Job
    approval: JobApproval
    decisions: list[ApprovalDecision]


class SignerApprovals:
    """What approvers do with their token, and what operators read of an approval step."""

    def __init__(self, sessions: Sessions, temporal: TemporalHandle) -> None:
        self._sessions = sessions
        self._temporal = temporal

    async def authenticate(self, token: str | None, job_id: str) -> Approver:
        """The approver a token names, for this job only (401 unknown, 403 another job's)."""
        return await authenticate(self._sessions, token, job_id)

    async def decide(self, approver: Approver, decision: Decision,
                     reason: str | None = None) -> ApprovalDecision:
        """Record one decision (a rejection is a veto) and tell the job's workflow."""
        client: Client | None
        try:
            client = await self._temporal()
        except Exception:
            # The decision is recorded all the same; the waiting workflow re-reads the store.
            client = None
        return await decide(self._sessions, client, approver, decision, reason)

    async def snapshot(self, job_id: str) -> ApprovalSnapshot:
        """The job's approval step; 404 `job.not-found` when it has none."""
        async with self._sessions() as session:
            job = await session.get(Job, job_id)
            approval = await session.get(JobApproval, job_id)
            rows = (await session.exec(select(ApprovalDecision).where(
                ApprovalDecision.job_id == job_id).order_by(ApprovalDecision.id))).all()
        if job is None or approval is None:
            raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"Job {job_id} has no approval step.")
        return ApprovalSnapshot(job, approval, list(rows))

    async def cnab240_lines(self, job_id: str) -> list[Cnab240Line]:
        """A CNAB240 payment file's lines in order; 404 `job.not-found` for an unknown job."""
        async with self._sessions() as session:
            if await session.get(Job, job_id) is None:
                raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
            return list((await session.exec(select(Cnab240Line).where(
                Cnab240Line.job_id == job_id).order_by(Cnab240Line.line_no))).all())

    async def preview(self, job_id: str) -> bytes:
        """The held PDF's first page as a PNG (404 `approval.no-preview` for other files)."""
        return await first_page_png(self._sessions, job_id)

"""Approvers' decisions and the operator's reads of a job's approval step."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.approvals.decisions import Approver, authenticate, decide
from activities.signer.operator.errors import refuse
from shared.contracts.signer import SignerErrorCode
from shared.db.signer_approval_models import ApprovalDecision, Cnab240Line, JobApproval
from shared.db.signer_models import Job

__all__ = ["ApprovalSnapshot", "Approver", "approval_snapshot", "authenticate",
           "cnab240_lines", "decide"]


@dataclass(frozen=True)
class ApprovalSnapshot:
    """A held job, its approval step and the decisions so far (oldest first)."""

    job: Job
    approval: JobApproval
    decisions: list[ApprovalDecision]


async def approval_snapshot(sessions: async_sessionmaker[AsyncSession],
                            job_id: str) -> ApprovalSnapshot:
    """The job's approval step; 404 `job.not-found` when it has none."""
    async with sessions() as session:
        job = await session.get(Job, job_id)
        approval = await session.get(JobApproval, job_id)
        rows = (await session.exec(select(ApprovalDecision).where(
            ApprovalDecision.job_id == job_id).order_by(ApprovalDecision.id))).all()
    if job is None or approval is None:
        raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"Job {job_id} has no approval step.")
    return ApprovalSnapshot(job, approval, list(rows))


async def cnab240_lines(sessions: async_sessionmaker[AsyncSession],
                        job_id: str) -> list[Cnab240Line]:
    """A CNAB240 payment file's lines in order; 404 `job.not-found` for an unknown job."""
    async with sessions() as session:
        if await session.get(Job, job_id) is None:
            raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
        return list((await session.exec(select(Cnab240Line).where(
            Cnab240Line.job_id == job_id).order_by(Cnab240Line.line_no))).all())

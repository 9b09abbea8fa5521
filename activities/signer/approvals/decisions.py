"""An approver's decision: authenticated by the approver's token, recorded once, audited."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.signer.approvals.store import move_approval
from activities.signer.approvals.tokens import hashes_match, mask_email, token_hash
from activities.signer.contracts.approvals import ApprovalErrorCode, ApprovalState, Decision
from activities.signer.contracts.errors import signer_error
from activities.signer.contracts.jobs import job_workflow_id
from activities.signer.contracts.names import APPROVAL_DECIDED_SIGNAL
from activities.signer.models.approvals import ApprovalDecision, ApproverToken, JobApproval
from activities.signer.models.jobs import Job, JobHistory
from shared.db.models import OperationalEvent, as_utc
from shared.errors import EsteiraError

log = logging.getLogger("esteira.signer.approvals")
# A decision counts while the job waits, and after a release until the signature is sealed.
OPEN_STATES = (ApprovalState.WAITING, ApprovalState.RELEASED)


def refuse(code: ApprovalErrorCode, message: str) -> EsteiraError:
    """An EsteiraError refused as the signer's error table says for this approval code."""
    return signer_error(code, message)


@dataclass(frozen=True)
class Approver:
    """Who a token belongs to."""

    job_id: str
    name: str
    email: str


async def authenticate(sessions: async_sessionmaker[AsyncSession], token: str | None,
                       job_id: str) -> Approver:
    """The approver a token names, for this job only (401 unknown, 403 another job's)."""
    if not token:
        raise refuse(ApprovalErrorCode.INVALID_TOKEN,
                     "An approver token is required (Authorization: Bearer <token>).")
    presented = token_hash(token)
    async with sessions() as session:
        row = await session.get(ApproverToken, presented)
    if row is None or not hashes_match(presented, row.token_sha256):
        raise refuse(ApprovalErrorCode.INVALID_TOKEN, "The approver token is not valid.")
    if row.job_id != job_id:
        raise refuse(ApprovalErrorCode.FORBIDDEN, "This token does not decide on this job.")
    return Approver(row.job_id, row.approver, row.email)


async def decide(sessions: async_sessionmaker[AsyncSession], client: Client | None,
                 approver: Approver, decision: Decision, reason: str | None
                 ) -> ApprovalDecision:
    """Record one decision; a rejection is a veto; the job's workflow is told."""
    masked = mask_email(approver.email)
    async with sessions() as session:
        job = await session.get(Job, approver.job_id)
        approval = await session.get(JobApproval, approver.job_id)
        earlier = (await session.exec(select(ApprovalDecision.decision).where(
            ApprovalDecision.job_id == approver.job_id,
            ApprovalDecision.approver == approver.name))).first()
        if earlier is not None:
            raise refuse(ApprovalErrorCode.ALREADY_DECIDED,
                         f"{approver.name} already decided on job {approver.job_id} "
                         f"({earlier}).")
        if job is None or approval is None or approval.state not in OPEN_STATES:
            raise _not_awaiting(job, approval)
        # Conditional on the state just read: a seal, expiry or other veto in between wins.
        to = ApprovalState.REJECTED if decision is Decision.REJECTED \
            else ApprovalState(approval.state)
        if not await move_approval(session, approval.job_id, [ApprovalState(approval.state)],
                                   to):
            await session.rollback()
            # The rollback expired what was read (reading it now would be a sync load):
            # read again what won the race, for the answer.
            raise _not_awaiting(await session.get(Job, approver.job_id),
                                await session.get(JobApproval, approver.job_id))
        row = ApprovalDecision(job_id=job.id, approver=approver.name, email_masked=masked,
                               decision=decision.value, reason=reason)
        verb = "approved" if decision is Decision.APPROVED else "rejected"
        text = f"{approver.name} ({masked}) {verb} job {job.id} ('{job.file_name}')."
        if reason:
            text += f" Reason: {reason.rstrip('.')}."
        session.add(row)
        session.add(JobHistory(job_id=job.id, message=f"Approval: {text}"))
        session.add(OperationalEvent(
            domain="signer", type="ApprovalDecided", actor=approver.name,
            message=f"Approval decided: {text}",
            properties={"jobId": job.id, "approver": approver.name, "email": masked,
                        "decision": decision.value, "reason": reason}))
        try:
            await session.commit()
        except IntegrityError:
            await session.rollback()
            raise refuse(ApprovalErrorCode.ALREADY_DECIDED,
                          f"{approver.name} already decided on job {approver.job_id}.") from None
        await session.refresh(row)
    if client is not None:
        # The store is the truth; a lost signal only delays the tally until the next one.
        with contextlib.suppress(Exception):
            await client.get_workflow_handle(job_workflow_id(job.id)).signal(
                APPROVAL_DECIDED_SIGNAL)
    log.info("Approval decided: %s", text)
    return row


async def decisions_of(sessions: async_sessionmaker[AsyncSession], job_id: str
                       ) -> list[ApprovalDecision]:
    """A job's decisions, oldest first."""
    async with sessions() as session:
        return list((await session.exec(select(ApprovalDecision).where(
            ApprovalDecision.job_id == job_id).order_by(ApprovalDecision.id))).all())


async def approvals_summary(sessions: async_sessionmaker[AsyncSession], job_id: str
                            ) -> str | None:
    """`Approvals: Approved by Ana (a***a@x.com) at …; …` for the `JobDeleted` line."""
    rows = await decisions_of(sessions, job_id)
    if not rows:
        return None
    return "Approvals: " + "; ".join(
        f"{r.decision} by {r.approver} ({r.email_masked}) at {as_utc(r.at).isoformat()}"
        for r in rows) + "."


def _not_awaiting(job: Job | None, approval: JobApproval | None) -> EsteiraError:
    state = f"{job.status}" if job else "gone"
    if approval is not None:
        state += f", approval {approval.state}"
    return refuse(ApprovalErrorCode.NOT_AWAITING,
                  f"Job {job.id if job else ''} is not awaiting approval ({state}).")

"""Approval rows: hold a job, tally it, release it or end its wait — each one conditional write."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path

from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.approvals.mail import approval_request
from activities.signer.approvals.tokens import mask_email, new_token, token_hash
from activities.signer.contracts.approvals import ApprovalState, ApprovalTally, Decision
from activities.signer.contracts.jobs import JobStatus
from activities.signer.models.approvals import (
    ApprovalDecision,
    ApproverToken,
    JobApproval,
    NotificationOutbox,
)
from activities.signer.models.jobs import Job, JobHistory, SigningProfile
from activities.signer.profiles import ApprovalConfig
from activities.signer.storage import Fingerprint
from shared.db.models import OperationalEvent, as_utc, utcnow


async def move_job(session: AsyncSession, job_id: str, expected: Iterable[JobStatus],
                   to: JobStatus, message: str, *, code: str | None = None,
                   **fields: object) -> bool:
    """The repository's conditional transition, inside the caller's transaction."""
    now = utcnow()
    current = (await session.exec(select(Job.status).where(Job.id == job_id))).first()
    result = await session.exec(
        update(Job).where(Job.id == job_id, Job.status.in_([s.value for s in expected]))
        .values(status=to.value, updated_at=now, version=Job.version + 1, **fields))
    if result.rowcount != 1:
        return False
    session.add(JobHistory(job_id=job_id, from_status=current, to_status=to.value, code=code,
                           message=message, at=now))
    return True


async def move_approval(session: AsyncSession, job_id: str, expected: Iterable[ApprovalState],
                        to: ApprovalState, **fields: object) -> bool:
    """Approval state `expected` -> `to`; False when another writer moved it first."""
    result = await session.exec(
        update(JobApproval).where(JobApproval.job_id == job_id,
                                  JobApproval.state.in_([s.value for s in expected]))
        .values(state=to.value, **fields))
    return result.rowcount == 1


class ApprovalStore:
    """Reads and conditional writes of a job's approval, its tokens and its outbox."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], *,
                 base_url: str = "http://127.0.0.1:8080") -> None:
        self.sessions = sessions
        self.base_url = base_url.rstrip("/")

    async def get(self, job_id: str) -> JobApproval | None:
        """A job's approval row."""
        async with self.sessions() as session:
            return await session.get(JobApproval, job_id)

    async def hold(self, job: Job, profile: SigningProfile, staged: Path,
                   fingerprint: Fingerprint) -> bool:
        """Processing -> AwaitingApproval with the rule snapshot, tokens and e-mails queued."""
        rule = ApprovalConfig(**(profile.approval or {}))
        now = utcnow()
        expires_at = (now + timedelta(seconds=rule.expires_after_seconds)
                      if rule.expires_after_seconds else None)
        snapshot = {"approvers": [{"name": a.name, "email": mask_email(a.email)}
                                  for a in rule.approvers],
                    "quorum": rule.quorum, "expiresAfterSeconds": rule.expires_after_seconds}
        message = (f"Awaiting approval: {rule.quorum} of {len(rule.approvers)} approver(s) "
                   f"must approve (sha256 {fingerprint.sha256}).")
        async with self.sessions() as session:
            if not await move_job(session, job.id, [JobStatus.PROCESSING],
                                  JobStatus.AWAITING_APPROVAL, message):
                await session.rollback()
                return False
            session.add(JobApproval(
                job_id=job.id, profile_name=profile.name, rule=snapshot, quorum=rule.quorum,
                staged_path=str(staged), staged_size=fingerprint.size,
                staged_sha256=fingerprint.sha256, state=ApprovalState.WAITING.value,
                requested_at=now, expires_at=expires_at))
            for approver in rule.approvers:
                token = new_token()
                session.add(ApproverToken(token_sha256=token_hash(token), job_id=job.id,
                                          approver=approver.name, email=approver.email))
                subject, body = approval_request(
                    job=job, approver=approver.name, quorum=rule.quorum,
                    approvers=len(rule.approvers), sha256=fingerprint.sha256,
                    expires_at=expires_at, base_url=self.base_url, token=token)
                session.add(NotificationOutbox(job_id=job.id, to_address=approver.email,
                                               subject=subject, body=body))
            session.add(OperationalEvent(
                domain="signer", type="ApprovalRequested", message=f"Job {job.id} "
                f"('{job.file_name}') awaits approval: {rule.quorum} of "
                f"{len(rule.approvers)} approver(s).",
                properties={"jobId": job.id, "rule": snapshot}))
            await session.commit()
        return True

    async def tally(self, job_id: str) -> ApprovalTally:
        """The job's status, the approval state and the decisions so far."""
        async with self.sessions() as session:
            job = await session.get(Job, job_id)
            approval = await session.get(JobApproval, job_id)
            counts = dict((await session.exec(
                select(ApprovalDecision.decision, func.count()).where(
                    ApprovalDecision.job_id == job_id).group_by(ApprovalDecision.decision)
            )).all())
        if approval is None:
            return ApprovalTally(job_status=job.status if job else None, state=None)
        return ApprovalTally(
            job_status=job.status if job else None, state=ApprovalState(approval.state),
            approvals=counts.get(Decision.APPROVED.value, 0),
            rejected=approval.state == ApprovalState.REJECTED
            or counts.get(Decision.REJECTED.value, 0) > 0,
            quorum=approval.quorum,
            expires_at=as_utc(approval.expires_at) if approval.expires_at else None)

    async def release(self, job_id: str) -> bool:
        """Quorum reached: Waiting -> Released and AwaitingApproval -> Queued, together."""
        async with self.sessions() as session:
            approval = await session.get(JobApproval, job_id)
            names = list((await session.exec(select(ApprovalDecision.approver).where(
                ApprovalDecision.job_id == job_id,
                ApprovalDecision.decision == Decision.APPROVED.value)
                .order_by(ApprovalDecision.id))).all())
            if approval is None or len(names) < approval.quorum:
                return False
            if approval.state == ApprovalState.RELEASED:
                # An earlier attempt released it and its answer was lost: done, if still queued.
                job = await session.get(Job, job_id)
                return job is not None and job.status == JobStatus.QUEUED.value
            message = (f"Approved by {', '.join(names)} ({len(names)} of {approval.quorum} "
                       "required); back to the queue.")
            if not (await move_approval(session, job_id, [ApprovalState.WAITING],
                                        ApprovalState.RELEASED)
                    and await move_job(session, job_id, [JobStatus.AWAITING_APPROVAL],
                                       JobStatus.QUEUED, message)):
                await session.rollback()
                return False
            await session.commit()
        return True

    async def end_wait(self, job_id: str, *, expected: Iterable[ApprovalState],
                       to: ApprovalState, message: str, code: str | None = None,
                       event: OperationalEvent | None = None,
                       held_in: JobStatus = JobStatus.AWAITING_APPROVAL,
                       **fields: object) -> bool:
        """`held_in` -> Canceled with the approval moved to `to` (reject or expiry)."""
        now = utcnow()
        async with self.sessions() as session:
            # Conditional on `held_in`: an operator cancel racing it has exactly one winner.
            if not (await move_approval(session, job_id, expected, to, ended_at=now)
                    and await move_job(session, job_id, [held_in],
                                       JobStatus.CANCELED, message, code=code,
                                       completed_at=now, **fields)):
                await session.rollback()
                return False
            if event is not None:
                session.add(event)
            await _forget_unsent_mail(session, job_id)
            await session.commit()
        return True

    async def mark(self, job_id: str, expected: Iterable[ApprovalState],
                   to: ApprovalState) -> bool:
        """Move only the approval row (operator cancel, sealing before the signature)."""
        async with self.sessions() as session:
            moved = await move_approval(session, job_id, expected, to, ended_at=utcnow())
            if moved:
                await _forget_unsent_mail(session, job_id)
            await session.commit()
        return moved

    async def rejection(self, job_id: str) -> ApprovalDecision | None:
        """The rejection recorded for a job, if any."""
        async with self.sessions() as session:
            return (await session.exec(select(ApprovalDecision).where(
                ApprovalDecision.job_id == job_id,
                ApprovalDecision.decision == Decision.REJECTED.value).limit(1))).first()


async def _forget_unsent_mail(session: AsyncSession, job_id: str) -> None:
    """The wait is over: e-mails never sent lose their bodies (each carries a live token)."""
    await session.exec(update(NotificationOutbox).where(
        NotificationOutbox.job_id == job_id, NotificationOutbox.sent_at.is_(None))
        .values(body=None))

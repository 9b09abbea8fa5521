"""Approvers' doors (their own token, not the API key) and the operator's approval views."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field
from sqlmodel import select

from activities.signer.approvals import decisions
from activities.signer.operator.errors import refuse
from services.api.context import ApiContext
from shared.contracts.signer import SignerErrorCode
from shared.contracts.signer_approvals import Decision
from shared.db.models import as_utc
from shared.db.signer_approval_models import ApprovalDecision, Cnab240Line, JobApproval
from shared.db.signer_models import Job

# Everything under this prefix authenticates with an approver token (services/api/auth.py).
APPROVER_PREFIX = "/api/approvals/"
router = APIRouter(prefix="/api", tags=["signer-approvals"])


class RejectRequest(BaseModel):
    """Body of `POST /api/approvals/{job}/reject`: a veto always says why."""

    reason: str = Field(min_length=1, max_length=2000)


def _ctx(request: Request) -> ApiContext:
    return request.app.state.context


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _approver(request: Request, job_id: str) -> decisions.Approver:
    return await decisions.authenticate(_ctx(request).sessions, _bearer(request), job_id)


@router.get("/approvals/{job_id}")
async def approval_request(request: Request, job_id: str) -> dict:
    """What an approver sees: the file, its hash, the rule and the decisions so far."""
    approver = await _approver(request, job_id)
    return {**await _approval_view(_ctx(request), job_id), "you": approver.name}


@router.post("/approvals/{job_id}/approve")
async def approve(request: Request, job_id: str) -> dict:
    """Approve a held job (counts toward the quorum)."""
    return await _decide(request, job_id, Decision.APPROVED, None)


@router.post("/approvals/{job_id}/reject")
async def reject(request: Request, job_id: str, body: RejectRequest) -> dict:
    """Reject a held job: a veto, whatever the count."""
    return await _decide(request, job_id, Decision.REJECTED, body.reason)


@router.get("/jobs/{job_id}/approval")
async def job_approval(request: Request, job_id: str) -> dict:
    """The operator's view of a job's approval snapshot and decisions (API key)."""
    return await _approval_view(_ctx(request), job_id)


@router.get("/jobs/{job_id}/cnab240")
async def job_cnab240(request: Request, job_id: str) -> dict:
    """The per-line breakdown of a CNAB240 payment file (API key)."""
    async with _ctx(request).sessions() as session:
        if await session.get(Job, job_id) is None:
            raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
        lines = (await session.exec(select(Cnab240Line).where(
            Cnab240Line.job_id == job_id).order_by(Cnab240Line.line_no))).all()
    return {"jobId": job_id, "lines": [
        {"line": r.line_no, "recordType": r.record_type, "segment": r.segment,
         "movement": r.movement, "amountCents": r.amount_cents,
         "paymentDate": r.payment_date.isoformat() if r.payment_date else None}
        for r in lines]}


async def _decide(request: Request, job_id: str, decision: Decision,
                  reason: str | None) -> dict:
    ctx = _ctx(request)
    approver = await _approver(request, job_id)
    try:
        client = await ctx.temporal()
    except Exception:
        # The decision is recorded all the same; the waiting workflow re-reads the store.
        client = None
    row = await decisions.decide(ctx.sessions, client, approver, decision, reason)
    return _decision(row)


async def _approval_view(ctx: ApiContext, job_id: str) -> dict:
    async with ctx.sessions() as session:
        job = await session.get(Job, job_id)
        approval = await session.get(JobApproval, job_id)
        rows = (await session.exec(select(ApprovalDecision).where(
            ApprovalDecision.job_id == job_id).order_by(ApprovalDecision.id))).all()
    if job is None or approval is None:
        raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"Job {job_id} has no approval step.")
    return {"jobId": job.id, "fileName": job.file_name, "status": job.status,
            "approvalState": approval.state, "rule": approval.rule,
            "stagedSha256": approval.staged_sha256,
            "requestedAt": as_utc(approval.requested_at).isoformat(),
            "expiresAt": as_utc(approval.expires_at).isoformat() if approval.expires_at
            else None,
            "decisions": [_decision(r) for r in rows]}


def _decision(row: ApprovalDecision) -> dict:
    return {"approver": row.approver, "email": row.email_masked, "decision": row.decision,
            "reason": row.reason, "at": as_utc(row.at).isoformat()}

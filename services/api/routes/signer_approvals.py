"""Approvers' doors (their own token, not the API key) and the operator's approval views."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response
from pydantic import BaseModel, Field

from activities.signer.operator import approvals
from activities.signer.operator.approval_preview import first_page_png
from services.app_context import ContextDep
from shared.contracts.signer_approvals import Decision
from shared.db.models import as_utc
from shared.db.signer_approval_models import ApprovalDecision

# Everything under this prefix authenticates with an approver token (services/api/auth.py).
APPROVER_PREFIX = "/api/approvals/"
router = APIRouter(prefix="/api", tags=["signer-approvals"])


class RejectRequest(BaseModel):
    """Body of `POST /api/approvals/{job}/reject`: a veto always says why."""

    reason: str = Field(min_length=1, max_length=2000)


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _approver(request: Request, job_id: str, ctx: ContextDep) -> approvals.Approver:
    return await approvals.authenticate(ctx.sessions, _bearer(request), job_id)


# The approver whose token names this job (401/403 otherwise).
ApproverDep = Annotated[approvals.Approver, Depends(_approver)]


@router.get("/approvals/{job_id}")
async def approval_request(job_id: str, ctx: ContextDep, approver: ApproverDep) -> dict:
    """What an approver sees: the file, its hash, the rule and the decisions so far."""
    return {**await _approval_view(ctx, job_id), "you": approver.name}


@router.get("/approvals/{job_id}/preview", response_class=Response,
            responses={200: {"content": {"image/png": {}}}}, dependencies=[Depends(_approver)])
async def approval_preview(job_id: str, ctx: ContextDep) -> Response:
    """The held PDF's first page as a PNG (404 `approval.no-preview` for other files)."""
    png = await first_page_png(ctx.sessions, job_id)
    return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})


@router.post("/approvals/{job_id}/approve")
async def approve(ctx: ContextDep, approver: ApproverDep) -> dict:
    """Approve a held job (counts toward the quorum)."""
    return await _decide(ctx, approver, Decision.APPROVED, None)


@router.post("/approvals/{job_id}/reject")
async def reject(ctx: ContextDep, approver: ApproverDep, body: RejectRequest) -> dict:
    """Reject a held job: a veto, whatever the count."""
    return await _decide(ctx, approver, Decision.REJECTED, body.reason)


@router.get("/jobs/{job_id}/approval")
async def job_approval(job_id: str, ctx: ContextDep) -> dict:
    """The operator's view of a job's approval snapshot and decisions (API key)."""
    return await _approval_view(ctx, job_id)


@router.get("/jobs/{job_id}/cnab240")
async def job_cnab240(job_id: str, ctx: ContextDep) -> dict:
    """The per-line breakdown of a CNAB240 payment file (API key)."""
    lines = await approvals.cnab240_lines(ctx.sessions, job_id)
    return {"jobId": job_id, "lines": [
        {"line": r.line_no, "recordType": r.record_type, "segment": r.segment,
         "movement": r.movement, "amountCents": r.amount_cents,
         "paymentDate": r.payment_date.isoformat() if r.payment_date else None}
        for r in lines]}


async def _decide(ctx: ContextDep, approver: approvals.Approver, decision: Decision,
                  reason: str | None) -> dict:
    try:
        client = await ctx.temporal()
    except Exception:
        # The decision is recorded all the same; the waiting workflow re-reads the store.
        client = None
    row = await approvals.decide(ctx.sessions, client, approver, decision, reason)
    return _decision(row)


async def _approval_view(ctx: ContextDep, job_id: str) -> dict:
    snapshot = await approvals.approval_snapshot(ctx.sessions, job_id)
    job, approval = snapshot.job, snapshot.approval
    return {"jobId": job.id, "fileName": job.file_name, "status": job.status,
            "profile": approval.profile_name, "approvalState": approval.state,
            "rule": approval.rule, "stagedSha256": approval.staged_sha256,
            "requestedAt": as_utc(approval.requested_at).isoformat(),
            "expiresAt": as_utc(approval.expires_at).isoformat() if approval.expires_at
            else None,
            "decisions": [_decision(r) for r in snapshot.decisions]}


def _decision(row: ApprovalDecision) -> dict:
    return {"approver": row.approver, "email": row.email_masked, "decision": row.decision,
            "reason": row.reason, "at": as_utc(row.at).isoformat()}

"""Approvers' doors (their own token, not the API key) and the operator's approval views."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import Field

from activities.signer.contracts.approvals import Decision
from activities.signer.models.approvals import ApprovalDecision, Cnab240Line
from activities.signer.operator import ApprovalSnapshot, Approver
from services.api.routes.signer_schemas import iso
from services.app_context import SignerFace
from shared.wire import WireModel

# Everything under this prefix authenticates with an approver token (services/api/auth.py).
APPROVER_PREFIX = "/api/approvals/"
router = APIRouter(prefix="/api", tags=["signer-approvals"])


class RejectRequest(WireModel):
    """Body of `POST /api/approvals/{job}/reject`: a veto always says why."""

    reason: str = Field(min_length=1, max_length=2000)


class DecisionOut(WireModel):
    """One approver's decision (the address masked)."""

    approver: str
    email: str
    decision: str
    reason: str | None
    at: str | None

    @classmethod
    def of(cls, row: ApprovalDecision) -> DecisionOut:
        """A recorded decision."""
        return cls(approver=row.approver, email=row.email_masked, decision=row.decision,
                   reason=row.reason, at=iso(row.at))


class ApprovalView(WireModel):
    """A held job's approval step: the file, its hash, the rule and the decisions so far."""

    job_id: str
    file_name: str
    status: str
    profile: str | None
    approval_state: str
    rule: dict[str, Any]
    staged_sha256: str
    requested_at: str | None
    expires_at: str | None
    decisions: list[DecisionOut]

    @classmethod
    def of(cls, snapshot: ApprovalSnapshot) -> ApprovalView:
        """A job's approval step and its decisions."""
        job, approval = snapshot.job, snapshot.approval
        return cls(job_id=job.id, file_name=job.file_name, status=job.status,
                   profile=approval.profile_name, approval_state=approval.state,
                   rule=approval.rule, staged_sha256=approval.staged_sha256,
                   requested_at=iso(approval.requested_at), expires_at=iso(approval.expires_at),
                   decisions=[DecisionOut.of(r) for r in snapshot.decisions])


class ApproverView(ApprovalView):
    """What an approver sees, and who the token says they are."""

    you: str


class Cnab240LineOut(WireModel):
    """One line of a CNAB240 payment file."""

    line: int
    record_type: str | None
    segment: str | None
    movement: str | None
    amount_cents: int | None
    payment_date: str | None

    @classmethod
    def of(cls, row: Cnab240Line) -> Cnab240LineOut:
        """A stored line."""
        return cls(line=row.line_no, record_type=row.record_type, segment=row.segment,
                   movement=row.movement, amount_cents=row.amount_cents,
                   payment_date=row.payment_date.isoformat() if row.payment_date else None)


class Cnab240Answer(WireModel):
    """`GET /api/jobs/{id}/cnab240`: the file's lines in order."""

    job_id: str
    lines: list[Cnab240LineOut]


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _approver(request: Request, job_id: str, signer: SignerFace) -> Approver:
    return await signer.approvals.authenticate(_bearer(request), job_id)


# The approver whose token names this job (401/403 otherwise).
ApproverDep = Annotated[Approver, Depends(_approver)]


@router.get("/approvals/{job_id}", response_model=ApproverView)
async def approval_request(job_id: str, signer: SignerFace,
                           approver: ApproverDep) -> ApproverView:
    """What an approver sees: the file, its hash, the rule and the decisions so far."""
    view = ApprovalView.of(await signer.approvals.snapshot(job_id))
    return ApproverView(**dict(view), you=approver.name)


@router.get("/approvals/{job_id}/preview", response_class=Response,
            responses={200: {"content": {"image/png": {"schema": {"type": "string",
                                                                   "format": "binary"}}}}},
            dependencies=[Depends(_approver)])
async def approval_preview(job_id: str, signer: SignerFace) -> Response:
    """The held PDF's first page as a PNG (404 `approval.no-preview` for other files)."""
    png = await signer.approvals.preview(job_id)
    return Response(png, media_type="image/png", headers={"Cache-Control": "no-store"})


@router.post("/approvals/{job_id}/approve", response_model=DecisionOut)
async def approve(signer: SignerFace, approver: ApproverDep) -> DecisionOut:
    """Approve a held job (counts toward the quorum)."""
    return DecisionOut.of(await signer.approvals.decide(approver, Decision.APPROVED))


@router.post("/approvals/{job_id}/reject", response_model=DecisionOut)
async def reject(signer: SignerFace, approver: ApproverDep, body: RejectRequest) -> DecisionOut:
    """Reject a held job: a veto, whatever the count."""
    return DecisionOut.of(await signer.approvals.decide(approver, Decision.REJECTED,
                                                        body.reason))


@router.get("/jobs/{job_id}/approval", response_model=ApprovalView)
async def job_approval(job_id: str, signer: SignerFace) -> ApprovalView:
    """The operator's view of a job's approval snapshot and decisions (API key)."""
    return ApprovalView.of(await signer.approvals.snapshot(job_id))


@router.get("/jobs/{job_id}/cnab240", response_model=Cnab240Answer)
async def job_cnab240(job_id: str, signer: SignerFace) -> Cnab240Answer:
    """The per-line breakdown of a CNAB240 payment file (API key)."""
    lines = await signer.approvals.cnab240_lines(job_id)
    return Cnab240Answer(job_id=job_id, lines=[Cnab240LineOut.of(r) for r in lines])

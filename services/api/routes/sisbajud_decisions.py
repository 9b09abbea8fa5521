"""Human decisions of the SISBAJUD executor: the list, and a person's resolution (two people
for one that moves or frees money)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from sqlmodel import col, select

from activities.sisbajud import operator
from activities.sisbajud.operator import ResolutionIn
from services.api.routes.sisbajud_actor import credential_actor
from shared.db.sisbajud_models import SisbajudHumanDecision

__all__ = ["ResolutionIn", "router"]
router = APIRouter(prefix="/api/sisbajud/human-decisions", tags=["sisbajud"])


def _decision(row: SisbajudHumanDecision) -> dict[str, Any]:
    return {"id": row.id, "orderId": row.order_id, "revision": row.revision,
            "reason": row.reason, "humanDisposition": row.disposition, "detail": row.detail,
            "open": row.resolved_at is None, "createdAt": row.created_at.isoformat(),
            "resolvedAt": row.resolved_at.isoformat() if row.resolved_at else None,
            "resolvedBy": row.resolved_by, "resolutionReason": row.resolution_reason,
            "resolution": row.resolution, "proposedBy": row.proposed_by,
            "proposedAt": row.proposed_at.isoformat() if row.proposed_at else None,
            "proposalReason": row.proposal_reason, "proposal": row.proposal}


@router.get("")
async def list_human_decisions(request: Request, open: bool | None = None,
                               limit: Annotated[int, Query(ge=1, le=500)] = 100
                               ) -> dict[str, Any]:
    """Orders waiting for (or decided by) a person, newest first; `open=true` for the waiting."""
    statement = (select(SisbajudHumanDecision)
                 .order_by(col(SisbajudHumanDecision.id).desc()).limit(limit))
    if open is not None:
        column = col(SisbajudHumanDecision.resolved_at)
        statement = statement.where(column.is_(None) if open else column.is_not(None))
    async with request.app.state.context.sessions() as session:
        rows = (await session.exec(statement)).all()
    return {"items": [_decision(r) for r in rows]}


@router.post("/{decision_id}/resolution", responses={202: {"description": "proposed"}})
async def resolve_decision(decision_id: int, body: ResolutionIn, request: Request,
                           response: Response = None) -> dict[str, Any]:  # type: ignore[assignment]
    """End the order's wait with this final result (200); one that moves or frees money is
    first proposed (202) and then confirmed by a different person (409 `sisbajud.same-actor`
    for the same one). The actor is the caller's credential."""
    context = request.app.state.context
    done = await operator.resolve_decision(context.sessions, context.temporal, decision_id,
                                           body, credential_actor(request))
    if response is not None and done["status"] == "proposed":
        response.status_code = 202  # None when the dashboard calls this handler directly
    return done

"""Human decisions of the SISBAJUD executor: the list, and a person's resolution."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlmodel import col, select
from temporalio.client import WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from shared.contracts.sisbajud import (
    Effect,
    ReasonCode,
    ResolveDecisionInput,
    ResolveDecisionResult,
    order_workflow_id,
)
from shared.db.sisbajud_models import SisbajudHumanDecision
from shared.errors import ErrorCode, EsteiraError

router = APIRouter(prefix="/api/sisbajud/human-decisions", tags=["sisbajud"])
DECISION_NOT_OPEN = "sisbajud.decision-not-open"
# The order's workflow is gone or no longer waits: nothing a retry of this call would fix.
GONE = (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION)


class ResolutionIn(BaseModel):
    """What the person decided: the final result, who they are and why."""

    model_config = ConfigDict(extra="forbid")

    actor: str = Field(min_length=1, max_length=200)
    reason: str = Field(min_length=1, max_length=2000)
    effect: Effect
    reasonCode: ReasonCode | None = None
    executedAmount: Decimal | None = Field(None, ge=0)
    transactionId: str | None = Field(None, max_length=64)

    @field_validator("effect")
    @classmethod
    def _known(cls, effect: Effect) -> Effect:
        if effect == Effect.INDETERMINATE:
            raise ValueError("a resolution must say what the effect was")
        return effect


def _decision(row: SisbajudHumanDecision) -> dict[str, Any]:
    return {"id": row.id, "orderId": row.order_id, "revision": row.revision,
            "reason": row.reason, "humanDisposition": row.disposition, "detail": row.detail,
            "open": row.resolved_at is None, "createdAt": row.created_at.isoformat(),
            "resolvedAt": row.resolved_at.isoformat() if row.resolved_at else None,
            "resolvedBy": row.resolved_by, "resolutionReason": row.resolution_reason,
            "resolution": row.resolution}


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


def _attributed(named: str, request: Request) -> str:
    """The person named in the body, with the credential that vouched for them."""
    credential = getattr(request.state, "actor", None) or "api-key"
    return named if named == credential or named.startswith(f"{credential}:") \
        else f"{named} (via {credential})"


@router.post("/{decision_id}/resolution")
async def resolve_decision(decision_id: int, body: ResolutionIn,
                           request: Request) -> dict[str, Any]:
    """End the order's wait with this final result; it goes out through the outbox once."""
    async with request.app.state.context.sessions() as session:
        row = await session.get(SisbajudHumanDecision, decision_id)
    if row is None:
        raise EsteiraError(ErrorCode.NOT_FOUND, f"No human decision {decision_id}.")
    if row.resolved_at is not None:
        raise EsteiraError(DECISION_NOT_OPEN, f"Decision {decision_id} was already resolved "
                           f"by {row.resolved_by}.", status=409)
    update = ResolveDecisionInput(
        revision=row.revision, effect=body.effect, reason_code=body.reasonCode,
        executed_amount=body.executedAmount, transaction_id=body.transactionId,
        actor=_attributed(body.actor, request), reason=body.reason)
    try:
        client = await request.app.state.context.temporal()
        handle = client.get_workflow_handle(order_workflow_id(row.order_id))
        done = await handle.execute_update("resolve", update, result_type=ResolveDecisionResult)
    except WorkflowUpdateFailedError as exc:
        raise EsteiraError(DECISION_NOT_OPEN, f"Order {row.order_id} r{row.revision} does not "
                           f"wait for this decision: {exc.cause}", status=409) from exc
    except RPCError as exc:
        if exc.status in GONE:
            raise EsteiraError(DECISION_NOT_OPEN, f"Order {row.order_id} no longer waits for "
                               "a decision.", status=409) from exc
        raise EsteiraError(ErrorCode.TEMPORAL_UNAVAILABLE, "Temporal is unavailable.") from exc
    return {"orderId": done.order_id, "revision": done.revision, "resultKey": done.result_key}

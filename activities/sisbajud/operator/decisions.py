"""Human decisions: the list, and a person's resolution (two people when money moves)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlmodel import col, select
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from activities.sisbajud.operator.payloads import ResolutionIn
from activities.sisbajud.operator.trail import Sessions, TemporalProvider
from activities.sisbajud.store import DOMAIN
from shared.contracts.sisbajud import (
    Effect,
    HumanDisposition,
    ResolveDecisionInput,
    ResolveDecisionResult,
    order_workflow_id,
)
from shared.contracts.sisbajud_errors import SisbajudApiErrorCode, sisbajud_error
from shared.contracts.sisbajud_names import RESOLVE_UPDATE
from shared.db.models import as_utc, utcnow
from shared.db.sisbajud_models import SisbajudHumanDecision
from shared.errors import ErrorCode, EsteiraError
from shared.events import record_event

DECISION_NOT_OPEN = SisbajudApiErrorCode.DECISION_NOT_OPEN
# The order's workflow is gone or no longer waits: nothing a retry of this call would fix.
GONE = (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION)
# The actors that name a person (the API key names none).
NAMED_PREFIX = "operator:"


def _decision(row: SisbajudHumanDecision) -> dict[str, Any]:
    return {"id": row.id, "orderId": row.order_id, "revision": row.revision,
            "reason": row.reason, "humanDisposition": row.disposition, "detail": row.detail,
            "open": row.resolved_at is None, "createdAt": row.created_at.isoformat(),
            "resolvedAt": row.resolved_at.isoformat() if row.resolved_at else None,
            "resolvedBy": row.resolved_by, "resolutionReason": row.resolution_reason,
            "resolution": row.resolution, "proposedBy": row.proposed_by,
            "proposedAt": row.proposed_at.isoformat() if row.proposed_at else None,
            "proposalReason": row.proposal_reason, "proposal": row.proposal,
            "proofFoundAt": row.proof_found_at.isoformat() if row.proof_found_at else None,
            "ledgerProof": row.ledger_proof,
            "decideBy": as_utc(row.decide_by).isoformat() if row.decide_by else None}


async def list_decisions(sessions: Sessions, open: bool | None, limit: int) -> dict[str, Any]:
    """Orders waiting for (or decided by) a person, newest first; `open=True` for the waiting."""
    statement = (select(SisbajudHumanDecision)
                 .order_by(col(SisbajudHumanDecision.id).desc()).limit(limit))
    if open is not None:
        column = col(SisbajudHumanDecision.resolved_at)
        statement = statement.where(column.is_(None) if open else column.is_not(None))
    async with sessions() as session:
        rows = (await session.exec(statement)).all()
    return {"items": [_decision(r) for r in rows]}


def moves_money(row: SisbajudHumanDecision, body: ResolutionIn) -> bool:
    """Held money, or a resolution saying money was blocked or freed: two people decide."""
    return (row.disposition == HumanDisposition.HELD_MONEY_MOVED
            or body.effect in (Effect.FULL, Effect.PARTIAL))


async def _propose(sessions: Sessions, row: SisbajudHumanDecision, body: ResolutionIn,
                   actor: str) -> dict[str, Any]:
    """Record the first person's resolution; nothing reaches the order until a second."""
    async with sessions() as session:
        claimed = await session.exec(update(SisbajudHumanDecision).where(  # type: ignore[call-overload]
            SisbajudHumanDecision.id == row.id,
            col(SisbajudHumanDecision.proposed_by).is_(None),
            col(SisbajudHumanDecision.resolved_at).is_(None),
        ).values(proposed_by=actor, proposed_at=utcnow(), proposal_reason=body.reason,
                 proposal=body.decided()))
        if not claimed.rowcount:
            raise sisbajud_error(DECISION_NOT_OPEN, f"Decision {row.id} changed meanwhile; "
                                 "read it again.")
        await record_event(session, domain=DOMAIN, type="HumanDecisionProposed",
                           message=f"Order {row.order_id} r{row.revision}: resolution "
                                   f"proposed by {actor}, waiting for a second person",
                           actor=actor, order_id=row.order_id, revision=row.revision,
                           decision_id=row.id, reason=body.reason, proposal=body.decided())
        await session.commit()
    return {"status": "proposed", "decisionId": row.id, "orderId": row.order_id,
            "revision": row.revision, "proposedBy": actor}


def _known_effect(row: SisbajudHumanDecision, body: ResolutionIn) -> None:
    """Held money that moved becomes the write's known effect, which a later release
    returns: it needs the amount and the ledger transaction that moved it."""
    if (row.disposition == HumanDisposition.HELD_MONEY_MOVED
            and body.effect in (Effect.FULL, Effect.PARTIAL)
            and (body.executedAmount is None or not body.executedAmount
                 or not body.transactionId)):
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           f"Decision {row.id} holds money: a {body.effect.value} resolution "
                           "needs executedAmount (> 0) and the ledger's transactionId.")


def _named(actor: str) -> None:
    """Two people means two named ones: the shared API key could be either of them."""
    if not actor.startswith(NAMED_PREFIX):
        raise sisbajud_error(SisbajudApiErrorCode.OPERATOR_INVALID,
                             "A resolution that moves or frees money needs a named operator's "
                             "credential (Authorization: Basic, or a dashboard session).")


def _confirming(row: SisbajudHumanDecision, body: ResolutionIn, actor: str) -> str:
    """The attribution of a confirmed resolution (409 when the proposer confirms, or when the
    confirmation says something else than the proposal)."""
    if actor == row.proposed_by:
        raise sisbajud_error(SisbajudApiErrorCode.SAME_ACTOR,
                             f"Decision {row.id} was proposed by {actor}; another person must "
                             "confirm it.")
    if row.proposal != body.decided():
        raise sisbajud_error(SisbajudApiErrorCode.PROPOSAL_MISMATCH,
                             f"Decision {row.id} was proposed as {row.proposal}; confirm that "
                             "or have the proposal withdrawn.")
    return f"{actor}, confirming {row.proposed_by}"


async def _drop_proposal(sessions: Sessions, row: SisbajudHumanDecision, why: str) -> str:
    """The ledger does not bear the proposal out: it is dropped (else nobody could confirm
    anything else), with an event; the people propose again."""
    if row.proposed_by is None:
        return ""
    async with sessions() as session:
        dropped = await session.exec(update(SisbajudHumanDecision).where(  # type: ignore[call-overload]
            SisbajudHumanDecision.id == row.id,
            SisbajudHumanDecision.proposed_by == row.proposed_by,
            col(SisbajudHumanDecision.resolved_at).is_(None),
        ).values(proposed_by=None, proposed_at=None, proposal_reason=None, proposal=None))
        if dropped.rowcount:
            await record_event(session, domain=DOMAIN, type="HumanDecisionProposalDropped",
                               message=f"Order {row.order_id} r{row.revision}: the proposal "
                                       f"by {row.proposed_by} is dropped: {why}",
                               order_id=row.order_id, revision=row.revision,
                               decision_id=row.id, proposed_by=row.proposed_by, reason=why)
        await session.commit()
    return f"; the proposal by {row.proposed_by} is dropped, propose again"


async def resolve_decision(sessions: Sessions, temporal: TemporalProvider, decision_id: int,
                           body: ResolutionIn, actor: str) -> dict[str, Any]:
    """End the order's wait with this final result; it goes out through the outbox once.
    A resolution that moves or frees money is first proposed (`status: proposed`), then
    confirmed by a different person (409 `sisbajud.same-actor` for the same one); both must be
    named operators (401 `sisbajud.operator-invalid` for the shared API key)."""
    if body.actor is not None and body.actor != actor:
        raise sisbajud_error(SisbajudApiErrorCode.ACTOR_NOT_CREDENTIAL,
                             f"The actor is {actor}, from the credential; leave `actor` out.")
    async with sessions() as session:
        row = await session.get(SisbajudHumanDecision, decision_id)
    if row is None:
        raise EsteiraError(ErrorCode.NOT_FOUND, f"No human decision {decision_id}.")
    if row.resolved_at is not None:
        raise sisbajud_error(DECISION_NOT_OPEN, f"Decision {decision_id} was already resolved "
                             f"by {row.resolved_by}.")
    if row.proposed_by is not None or moves_money(row, body):
        _named(actor)
    _known_effect(row, body)
    if row.proposed_by is None and moves_money(row, body):
        return await _propose(sessions, row, body, actor)
    if row.proposed_by is not None:
        actor = _confirming(row, body, actor)
    resolution = ResolveDecisionInput(
        revision=row.revision, effect=body.effect, reason_code=body.reasonCode,
        executed_amount=body.executedAmount, transaction_id=body.transactionId,
        actor=actor, reason=body.reason)
    try:
        client = await temporal()
        handle = client.get_workflow_handle(order_workflow_id(row.order_id))
        done = await handle.execute_update(RESOLVE_UPDATE, resolution,
                                           result_type=ResolveDecisionResult)
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        if (isinstance(cause, ApplicationError)
                and cause.type == SisbajudApiErrorCode.TRANSACTION_UNPROVEN):
            dropped = await _drop_proposal(sessions, row, cause.message)
            raise sisbajud_error(SisbajudApiErrorCode.TRANSACTION_UNPROVEN,
                                 f"Decision {decision_id} stays open: {cause.message}{dropped}"
                                 ) from exc
        raise sisbajud_error(DECISION_NOT_OPEN, f"Order {row.order_id} r{row.revision} does "
                             f"not wait for this decision: {exc.cause}") from exc
    except RPCError as exc:
        if exc.status in GONE:
            raise sisbajud_error(DECISION_NOT_OPEN, f"Order {row.order_id} no longer waits "
                                 "for a decision.") from exc
        raise EsteiraError(ErrorCode.TEMPORAL_UNAVAILABLE, "Temporal is unavailable.") from exc
    return {"status": "resolved", "orderId": done.order_id, "revision": done.revision,
            "resultKey": done.result_key, "resolvedBy": actor}

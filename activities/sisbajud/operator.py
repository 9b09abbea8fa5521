"""Operator actions of the SISBAJUD executor, shared by REST and gRPC: requeue what was parked,
acknowledge alarms and orphans, resolve human decisions (two people when money moves); each
with its actor (from the caller's credential) and reason in the operational events trail."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import col
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from shared.contracts.sisbajud import (
    Effect,
    HumanDisposition,
    OrderState,
    ReasonCode,
    ResolveDecisionInput,
    ResolveDecisionResult,
    SisbajudApiErrorCode,
    order_workflow_id,
    sisbajud_error,
)
from shared.db.models import utcnow
from shared.db.sisbajud_models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
)
from shared.db.sisbajud_store import DOMAIN
from shared.errors import ErrorCode, EsteiraError
from shared.events import record_event

Sessions = async_sessionmaker[AsyncSession]
TemporalProvider = Callable[[], Awaitable[Client]]
PARKED = "PARKED"
DECISION_NOT_OPEN = SisbajudApiErrorCode.DECISION_NOT_OPEN
# The order's workflow is gone or no longer waits: nothing a retry of this call would fix.
GONE = (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION)
# What a confirmation must repeat of the proposal it confirms.
DECIDED_FIELDS = ("effect", "reasonCode", "executedAmount", "transactionId")
# The actors that name a person (the API key names none).
NAMED_PREFIX = "operator:"


class ActionIn(BaseModel):
    """Why the operator acts (the actor comes from the credential)."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=2000)


async def _changed(session: AsyncSession, statement, what: str) -> None:
    """Run a conditional update; 409 when another operator got there first."""
    if not (await session.exec(statement)).rowcount:  # type: ignore[call-overload]
        raise sisbajud_error(SisbajudApiErrorCode.NOT_PARKED, f"{what} changed meanwhile.")


async def _audit(session: AsyncSession, kind: str, message: str, actor: str, reason: str,
                 **properties: Any) -> None:
    await record_event(session, domain=DOMAIN, type=kind, message=f"{message} by {actor}: "
                       f"{reason}", actor=actor, reason=reason, **properties)
    await session.commit()


def _missing(what: str, ident: object) -> EsteiraError:
    return EsteiraError(ErrorCode.NOT_FOUND, f"No {what} {ident}.")


def _not_parked(what: str, state: str) -> EsteiraError:
    return sisbajud_error(SisbajudApiErrorCode.NOT_PARKED, f"{what} is {state}, not parked.")


async def requeue_notice(sessions: Sessions, notice_id: int, body: ActionIn,
                         actor: str) -> dict[str, Any]:
    """A parked delivery naming an order goes back to ingestion at the next tick."""
    async with sessions() as session:
        row = await session.get(SisbajudNotice, notice_id)
        if row is None:
            raise _missing("notice", notice_id)
        if row.state != PARKED:
            raise _not_parked(f"Notice {notice_id}", row.state)
        if row.order_id is None or row.revision is None:
            raise sisbajud_error(SisbajudApiErrorCode.NOTICE_UNUSABLE,
                                 f"Notice {notice_id} names no order and revision: "
                                 f"{row.reason}; nothing to requeue.")
        await _changed(session, update(SisbajudNotice).where(
            SisbajudNotice.id == notice_id, SisbajudNotice.state == PARKED,
        ).values(state="ACCEPTED", ingested_at=None), f"Notice {notice_id}")
        await _audit(session, "NoticeRequeued", f"Parked notice {notice_id} requeued", actor,
                     body.reason, notice_id=notice_id, order_id=row.order_id,
                     revision=row.revision)
    return {"noticeId": notice_id, "state": "ACCEPTED", "actor": actor}


async def requeue_result(sessions: Sessions, result_id: int, body: ActionIn,
                         actor: str) -> dict[str, Any]:
    """A parked result is sent again, under the same key, at the next tick."""
    async with sessions() as session:
        row = await session.get(SisbajudOutbox, result_id)
        if row is None:
            raise _missing("result", result_id)
        if row.state != PARKED:
            raise _not_parked(f"Result {row.idempotency_key}", row.state)
        await _changed(session, update(SisbajudOutbox).where(
            SisbajudOutbox.id == result_id, SisbajudOutbox.state == PARKED,
        ).values(state="PENDING", attempts=0, next_attempt_at=utcnow()),
            f"Result {row.idempotency_key}")
        await _audit(session, "ResultRequeued", f"Parked result {row.idempotency_key} "
                     "requeued", actor, body.reason, result_id=result_id,
                     order_id=row.order_id, idempotency_key=row.idempotency_key)
    return {"resultId": result_id, "idempotencyKey": row.idempotency_key, "state": "PENDING",
            "actor": actor}


async def requeue_order(sessions: Sessions, order_id: str, body: ActionIn,
                        actor: str) -> dict[str, Any]:
    """A parked order's revision is executed again: a notice for it is queued for the next
    tick and the revision's claim is released (its write keeps its key: nothing doubles)."""
    async with sessions() as session:
        row = await session.get(SisbajudOrder, order_id)
        if row is None:
            raise _missing("order", order_id)
        if row.state != OrderState.PARKED:
            raise _not_parked(f"Order {order_id}", row.state)
        await _changed(session, update(SisbajudOrder).where(
            col(SisbajudOrder.order_id) == order_id, SisbajudOrder.revision == row.revision,
            SisbajudOrder.state == OrderState.PARKED.value,
        ).values(run_id=None, updated_at=utcnow()), f"Order {order_id}")
        notice = SisbajudNotice(webhook_id=f"requeue:{order_id}:{row.revision}:{uuid.uuid4()}",
                                order_id=order_id, revision=row.revision, state="ACCEPTED",
                                reason=f"requeued by {actor}")
        session.add(notice)
        await session.flush()
        await _audit(session, "OrderRequeued", f"Parked order {order_id} r{row.revision} "
                     "requeued", actor, body.reason, order_id=order_id, revision=row.revision,
                     notice_id=notice.id)
    return {"orderId": order_id, "revision": row.revision, "noticeId": notice.id,
            "actor": actor}


async def _acknowledge(sessions: Sessions, model, key, what: str, body: ActionIn, actor: str,
                       kind: str, **properties: Any) -> dict[str, Any]:
    async with sessions() as session:
        row = await session.get(model, key)
        if row is None:
            raise _missing(what, key)
        if row.acknowledged_at is not None:
            raise sisbajud_error(SisbajudApiErrorCode.ALREADY_ACKNOWLEDGED,
                                 f"{what.capitalize()} {key} was acknowledged by "
                                 f"{row.acknowledged_by}.")
        primary = next(iter(model.__table__.primary_key.columns))
        claimed = await session.exec(update(model).where(  # type: ignore[call-overload]
            primary == key, col(model.acknowledged_at).is_(None),
        ).values(acknowledged_at=utcnow(), acknowledged_by=actor,
                 acknowledgement_reason=body.reason))
        if not claimed.rowcount:
            raise sisbajud_error(SisbajudApiErrorCode.ALREADY_ACKNOWLEDGED,
                                 f"{what.capitalize()} {key} was acknowledged meanwhile.")
        await _audit(session, kind, f"{what.capitalize()} {key} acknowledged", actor,
                     body.reason, **properties)
    return {"id": key, "acknowledgedBy": actor, "reason": body.reason}


async def acknowledge_alarm(sessions: Sessions, alarm_id: int, body: ActionIn,
                            actor: str) -> dict[str, Any]:
    """An operator looked at the alarm: who (the credential) and why, once."""
    return await _acknowledge(sessions, SisbajudAlarm, alarm_id, "alarm", body, actor,
                              "AlarmAcknowledged", alarm_id=alarm_id)


async def acknowledge_orphan(sessions: Sessions, operation_id: str, body: ActionIn,
                             actor: str) -> dict[str, Any]:
    """An operator looked at the foreign operation: who (the credential) and why, once."""
    return await _acknowledge(sessions, SisbajudOrphan, operation_id, "orphan", body, actor,
                              "OrphanAcknowledged", operation_id=operation_id)


class ResolutionIn(BaseModel):
    """What the person decided: the final result, who they are and why."""

    model_config = ConfigDict(extra="forbid")

    # The credential names the actor; a name here must be that same one (old clients).
    actor: str | None = Field(None, min_length=1, max_length=200)
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


def moves_money(row: SisbajudHumanDecision, body: ResolutionIn) -> bool:
    """Held money, or a resolution saying money was blocked or freed: two people decide."""
    return (row.disposition == HumanDisposition.HELD_MONEY_MOVED
            or body.effect in (Effect.FULL, Effect.PARTIAL))


def _decided(body: ResolutionIn) -> dict[str, Any]:
    return body.model_dump(mode="json", include=set(DECIDED_FIELDS))


async def _propose(sessions: Sessions, row: SisbajudHumanDecision, body: ResolutionIn,
                   actor: str) -> dict[str, Any]:
    """Record the first person's resolution; nothing reaches the order until a second."""
    async with sessions() as session:
        claimed = await session.exec(update(SisbajudHumanDecision).where(  # type: ignore[call-overload]
            SisbajudHumanDecision.id == row.id,
            col(SisbajudHumanDecision.proposed_by).is_(None),
            col(SisbajudHumanDecision.resolved_at).is_(None),
        ).values(proposed_by=actor, proposed_at=utcnow(), proposal_reason=body.reason,
                 proposal=_decided(body)))
        if not claimed.rowcount:
            raise sisbajud_error(DECISION_NOT_OPEN, f"Decision {row.id} changed meanwhile; "
                                 "read it again.")
        await record_event(session, domain=DOMAIN, type="HumanDecisionProposed",
                           message=f"Order {row.order_id} r{row.revision}: resolution "
                                   f"proposed by {actor}, waiting for a second person",
                           actor=actor, order_id=row.order_id, revision=row.revision,
                           decision_id=row.id, reason=body.reason, proposal=_decided(body))
        await session.commit()
    return {"status": "proposed", "decisionId": row.id, "orderId": row.order_id,
            "revision": row.revision, "proposedBy": actor}


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
    if row.proposal != _decided(body):
        raise sisbajud_error(SisbajudApiErrorCode.PROPOSAL_MISMATCH,
                             f"Decision {row.id} was proposed as {row.proposal}; confirm that "
                             "or have the proposal withdrawn.")
    return f"{actor}, confirming {row.proposed_by}"


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
    if row.proposed_by is None and moves_money(row, body):
        return await _propose(sessions, row, body, actor)
    if row.proposed_by is not None:
        actor = _confirming(row, body, actor)
    update = ResolveDecisionInput(
        revision=row.revision, effect=body.effect, reason_code=body.reasonCode,
        executed_amount=body.executedAmount, transaction_id=body.transactionId,
        actor=actor, reason=body.reason)
    try:
        client = await temporal()
        handle = client.get_workflow_handle(order_workflow_id(row.order_id))
        done = await handle.execute_update("resolve", update, result_type=ResolveDecisionResult)
    except WorkflowUpdateFailedError as exc:
        raise sisbajud_error(DECISION_NOT_OPEN, f"Order {row.order_id} r{row.revision} does "
                             f"not wait for this decision: {exc.cause}") from exc
    except RPCError as exc:
        if exc.status in GONE:
            raise sisbajud_error(DECISION_NOT_OPEN, f"Order {row.order_id} no longer waits "
                                 "for a decision.") from exc
        raise EsteiraError(ErrorCode.TEMPORAL_UNAVAILABLE, "Temporal is unavailable.") from exc
    return {"status": "resolved", "orderId": done.order_id, "revision": done.revision,
            "resultKey": done.result_key, "resolvedBy": actor}

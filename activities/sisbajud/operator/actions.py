"""An operator's actions: requeue what was parked (a notice, a result, an order's revision),
acknowledge an alarm or an orphan operation; each once, with who and why in the trail."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import update
from sqlmodel import SQLModel, col

from activities.sisbajud.contracts.errors import SisbajudApiErrorCode, sisbajud_error
from activities.sisbajud.contracts.orders import OrderState
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
)
from activities.sisbajud.operator.payloads import ActionIn
from activities.sisbajud.operator.trail import PARKED, audit, changed, missing, not_parked
from shared.db.engine import Sessions
from shared.db.models import utcnow

# What a requeued row becomes: due at the next tick.
ACCEPTED, PENDING = "ACCEPTED", "PENDING"


@dataclass(frozen=True)
class NoticeRequeued:
    """A parked delivery back in ingestion."""

    notice_id: int
    state: str
    actor: str


@dataclass(frozen=True)
class ResultRequeued:
    """A parked result due again under its key."""

    result_id: int
    idempotency_key: str
    state: str
    actor: str


@dataclass(frozen=True)
class OrderRequeued:
    """A parked order's revision queued again (`notice_id`: the notice that carries it)."""

    order_id: str
    revision: int
    notice_id: int
    actor: str


@dataclass(frozen=True)
class Acknowledged:
    """An alarm or orphan operation an operator looked at: who and why."""

    id: int | str
    acknowledged_by: str
    reason: str


class Actions:
    """Requeue and acknowledge, each a conditional update: a second operator gets 409."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def requeue_notice(self, notice_id: int, body: ActionIn,
                             actor: str) -> NoticeRequeued:
        """A parked delivery naming an order goes back to ingestion at the next tick."""
        async with self._sessions() as session:
            row = await session.get(SisbajudNotice, notice_id)
            if row is None:
                raise missing("notice", notice_id)
            if row.state != PARKED:
                raise not_parked(f"Notice {notice_id}", row.state)
            if row.order_id is None or row.revision is None:
                raise sisbajud_error(SisbajudApiErrorCode.NOTICE_UNUSABLE,
                                     f"Notice {notice_id} names no order and revision: "
                                     f"{row.reason}; nothing to requeue.")
            await changed(session, update(SisbajudNotice).where(
                SisbajudNotice.id == notice_id, SisbajudNotice.state == PARKED,
            ).values(state=ACCEPTED, ingested_at=None), f"Notice {notice_id}")
            await audit(session, "NoticeRequeued", f"Parked notice {notice_id} requeued",
                        actor, body.reason, notice_id=notice_id, order_id=row.order_id,
                        revision=row.revision)
        return NoticeRequeued(notice_id, ACCEPTED, actor)

    async def requeue_result(self, result_id: int, body: ActionIn,
                             actor: str) -> ResultRequeued:
        """A parked result is sent again, under the same key, at the next tick."""
        async with self._sessions() as session:
            row = await session.get(SisbajudOutbox, result_id)
            if row is None:
                raise missing("result", result_id)
            if row.state != PARKED:
                raise not_parked(f"Result {row.idempotency_key}", row.state)
            await changed(session, update(SisbajudOutbox).where(
                SisbajudOutbox.id == result_id, SisbajudOutbox.state == PARKED,
            ).values(state=PENDING, attempts=0, next_attempt_at=utcnow()),
                f"Result {row.idempotency_key}")
            await audit(session, "ResultRequeued", f"Parked result {row.idempotency_key} "
                        "requeued", actor, body.reason, result_id=result_id,
                        order_id=row.order_id, idempotency_key=row.idempotency_key)
        return ResultRequeued(result_id, row.idempotency_key, PENDING, actor)

    async def requeue_order(self, order_id: str, body: ActionIn, actor: str) -> OrderRequeued:
        """A parked order's revision is executed again: a notice for it is queued for the next
        tick and the revision's claim is released (its write keeps its key: nothing doubles)."""
        async with self._sessions() as session:
            row = await session.get(SisbajudOrder, order_id)
            if row is None:
                raise missing("order", order_id)
            if row.state != OrderState.PARKED:
                raise not_parked(f"Order {order_id}", row.state)
            await changed(session, update(SisbajudOrder).where(
                col(SisbajudOrder.order_id) == order_id, SisbajudOrder.revision == row.revision,
                SisbajudOrder.state == OrderState.PARKED.value,
            ).values(run_id=None, updated_at=utcnow()), f"Order {order_id}")
            notice = SisbajudNotice(
                webhook_id=f"requeue:{order_id}:{row.revision}:{uuid.uuid4()}",
                order_id=order_id, revision=row.revision, state=ACCEPTED,
                reason=f"requeued by {actor}")
            session.add(notice)
            await session.flush()
            assert notice.id is not None
            await audit(session, "OrderRequeued", f"Parked order {order_id} r{row.revision} "
                        "requeued", actor, body.reason, order_id=order_id,
                        revision=row.revision, notice_id=notice.id)
        return OrderRequeued(order_id, row.revision, notice.id, actor)

    async def acknowledge_alarm(self, alarm_id: int, body: ActionIn,
                                actor: str) -> Acknowledged:
        """An operator looked at the alarm: who (the credential) and why, once."""
        return await self._acknowledge(SisbajudAlarm, alarm_id, "alarm", body, actor,
                                       "AlarmAcknowledged", alarm_id=alarm_id)

    async def acknowledge_orphan(self, operation_id: str, body: ActionIn,
                                 actor: str) -> Acknowledged:
        """An operator looked at the foreign operation: who (the credential) and why, once."""
        return await self._acknowledge(SisbajudOrphan, operation_id, "orphan", body, actor,
                                       "OrphanAcknowledged", operation_id=operation_id)

    async def _acknowledge(self, model: type[SisbajudAlarm] | type[SisbajudOrphan],
                           key: int | str, what: str, body: ActionIn, actor: str, kind: str,
                           **properties: Any) -> Acknowledged:
        async with self._sessions() as session:
            row = await session.get(model, key)
            if row is None:
                raise missing(what, key)
            if row.acknowledged_at is not None:
                raise sisbajud_error(SisbajudApiErrorCode.ALREADY_ACKNOWLEDGED,
                                     f"{what.capitalize()} {key} was acknowledged by "
                                     f"{row.acknowledged_by}.")
            claimed = await session.exec(update(model).where(  # type: ignore[call-overload]
                _primary(model) == key, col(model.acknowledged_at).is_(None),
            ).values(acknowledged_at=utcnow(), acknowledged_by=actor,
                     acknowledgement_reason=body.reason))
            if not claimed.rowcount:
                raise sisbajud_error(SisbajudApiErrorCode.ALREADY_ACKNOWLEDGED,
                                     f"{what.capitalize()} {key} was acknowledged meanwhile.")
            await audit(session, kind, f"{what.capitalize()} {key} acknowledged", actor,
                        body.reason, **properties)
        return Acknowledged(key, actor, body.reason)


def _primary(model: type[SQLModel]) -> Any:
    return next(iter(model.__table__.primary_key.columns))  # type: ignore[attr-defined]

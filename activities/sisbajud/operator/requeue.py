"""Requeue what was parked: a notice, a result, an order's revision."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import update
from sqlmodel import col

from activities.sisbajud.operator.payloads import ActionIn
from activities.sisbajud.operator.trail import Sessions, audit, changed, missing, not_parked
from shared.contracts.sisbajud import OrderState
from shared.contracts.sisbajud_errors import SisbajudApiErrorCode, sisbajud_error
from shared.db.models import utcnow
from shared.db.sisbajud_models import SisbajudNotice, SisbajudOrder, SisbajudOutbox

PARKED = "PARKED"


async def requeue_notice(sessions: Sessions, notice_id: int, body: ActionIn,
                         actor: str) -> dict[str, Any]:
    """A parked delivery naming an order goes back to ingestion at the next tick."""
    async with sessions() as session:
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
        ).values(state="ACCEPTED", ingested_at=None), f"Notice {notice_id}")
        await audit(session, "NoticeRequeued", f"Parked notice {notice_id} requeued", actor,
                    body.reason, notice_id=notice_id, order_id=row.order_id,
                    revision=row.revision)
    return {"noticeId": notice_id, "state": "ACCEPTED", "actor": actor}


async def requeue_result(sessions: Sessions, result_id: int, body: ActionIn,
                         actor: str) -> dict[str, Any]:
    """A parked result is sent again, under the same key, at the next tick."""
    async with sessions() as session:
        row = await session.get(SisbajudOutbox, result_id)
        if row is None:
            raise missing("result", result_id)
        if row.state != PARKED:
            raise not_parked(f"Result {row.idempotency_key}", row.state)
        await changed(session, update(SisbajudOutbox).where(
            SisbajudOutbox.id == result_id, SisbajudOutbox.state == PARKED,
        ).values(state="PENDING", attempts=0, next_attempt_at=utcnow()),
            f"Result {row.idempotency_key}")
        await audit(session, "ResultRequeued", f"Parked result {row.idempotency_key} "
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
            raise missing("order", order_id)
        if row.state != OrderState.PARKED:
            raise not_parked(f"Order {order_id}", row.state)
        await changed(session, update(SisbajudOrder).where(
            col(SisbajudOrder.order_id) == order_id, SisbajudOrder.revision == row.revision,
            SisbajudOrder.state == OrderState.PARKED.value,
        ).values(run_id=None, updated_at=utcnow()), f"Order {order_id}")
        notice = SisbajudNotice(webhook_id=f"requeue:{order_id}:{row.revision}:{uuid.uuid4()}",
                                order_id=order_id, revision=row.revision, state="ACCEPTED",
                                reason=f"requeued by {actor}")
        session.add(notice)
        await session.flush()
        await audit(session, "OrderRequeued", f"Parked order {order_id} r{row.revision} "
                    "requeued", actor, body.reason, order_id=order_id, revision=row.revision,
                    notice_id=notice.id)
    return {"orderId": order_id, "revision": row.revision, "noticeId": notice.id,
            "actor": actor}

"""SISBAJUD writes of the gateway and the activities: notices, alarms, insert-or-ignore."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import SQLModel
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.orders import AlarmCode
from activities.sisbajud.metrics import ALARMS
from activities.sisbajud.models import SisbajudAlarm, SisbajudNotice
from shared.db.models import utcnow
from shared.events import record_event
from shared.logs import props

DOMAIN = "sisbajud"
PARKED_BODY_LIMIT = 4096
WEBHOOK_ID_LIMIT = 200
log = logging.getLogger("esteira.sisbajud")


async def insert_ignore(session: AsyncSession, model: type[SQLModel], values: dict[str, Any],
                        conflict: list[str]) -> bool:
    """`INSERT … ON CONFLICT DO NOTHING` on either backend; True when a row was inserted."""
    table = model.__table__  # type: ignore[attr-defined]
    dialect = session.bind.dialect.name if session.bind is not None else "sqlite"
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert(table).values(**values).on_conflict_do_nothing(index_elements=conflict)
    result = await session.exec(statement)  # type: ignore[call-overload]
    return bool(result.rowcount)


def stored_webhook_id(webhook_id: str) -> str:
    """The key a delivery is stored under: overlong ids are hashed (still one row per id,
    without refusing a signed delivery for the column's size)."""
    if len(webhook_id) > WEBHOOK_ID_LIMIT:
        return "sha256:" + hashlib.sha256(webhook_id.encode()).hexdigest()
    return webhook_id


async def record_notice(session: AsyncSession, *, webhook_id: str, order_id: str | None,
                        revision: int | None, parked_reason: str | None, body: bytes,
                        skew_s: int | None, skewed: bool, secret_index: int | None,
                        body_sha256: str | None = None) -> bool:
    """Record a signed delivery once per `webhook-id` (parked ones raise an alarm); commits."""
    webhook_id = stored_webhook_id(webhook_id)
    values: dict[str, Any] = {
        "webhook_id": webhook_id, "order_id": order_id, "revision": revision,
        "state": "PARKED" if parked_reason else "ACCEPTED", "reason": parked_reason,
        "skew_s": skew_s, "skewed": skewed, "secret_index": secret_index,
        "received_at": utcnow(), "body_sha256": body_sha256,
    }
    if parked_reason:
        # PostgreSQL text holds no NUL: shown as U+FFFD, like any other undecodable byte.
        values["body"] = body[:PARKED_BODY_LIMIT].decode(errors="replace").replace(
            "\x00", "\ufffd")
    inserted = await insert_ignore(session, SisbajudNotice, values, ["webhook_id"])
    if inserted and parked_reason:
        await raise_alarm(session, AlarmCode.NOTICE_UNUSABLE.value,
                          f"Signed delivery {webhook_id} is not a usable notice: {parked_reason}",
                          webhook_id=webhook_id, reason=parked_reason)
    await session.commit()
    return inserted


async def raise_alarm(session: AsyncSession, code: str, message: str, *,
                      order_id: str | None = None, webhook_id: str | None = None,
                      **details: Any) -> None:
    """Add an alarm (and its operational event) to the caller's transaction, and log it."""
    session.add(SisbajudAlarm(code=code, order_id=order_id, webhook_id=webhook_id,
                              message=message, details=details))
    await record_event(session, domain=DOMAIN, type=code, message=message,
                       order_id=order_id, webhook_id=webhook_id, **details)
    log.error("ALARM %s: %s", code, message,
              extra=props(AlarmCode=code, OrderId=order_id, WebhookId=webhook_id))
    ALARMS.labels(code).inc()

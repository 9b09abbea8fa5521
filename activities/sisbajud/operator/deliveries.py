"""The webhook gateway's writes: record a signed delivery, settle it after the order fetch."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from sqlmodel import select

from activities.sisbajud.metrics import NOTICE_SECONDS, NOTICES
from activities.sisbajud.notices import ACCEPTED, PARKED, WITHDRAWN, settle_notice
from activities.sisbajud.operator.trail import Sessions
from activities.sisbajud.store import raise_alarm, record_notice, stored_webhook_id
from shared.contracts.sisbajud import AlarmCode
from shared.db.sisbajud_models import SisbajudNotice

__all__ = ["ACCEPTED", "PARKED", "WITHDRAWN", "Recorded", "count_delivery",
           "record_delivery", "settle_delivery"]
# skew_s is an INTEGER column (32-bit on PostgreSQL); a skew past it is kept at the bound.
_INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class Recorded:
    """What recording a delivery found: inserted now, its state, a reused webhook-id."""

    inserted: bool
    state: str | None
    reused: bool = False


def _column(skew_s: int | None) -> int | None:
    return None if skew_s is None else max(-_INT_MAX, min(_INT_MAX, skew_s))


async def record_delivery(sessions: Sessions, *, webhook_id: str, order_id: str | None,
                          revision: int | None, parked_reason: str | None, body: bytes,
                          skew_s: int | None, skewed: bool, secret_index: int | None
                          ) -> Recorded:
    """Record the delivery once per `webhook-id`; a redelivery whose signed body differs
    from the recorded one raises `notice.id-reused` (the new body is not recorded)."""
    digest = hashlib.sha256(body).hexdigest()
    async with sessions() as session:
        inserted = await record_notice(
            session, webhook_id=webhook_id, order_id=order_id, revision=revision,
            parked_reason=parked_reason, body=body, skew_s=_column(skew_s), skewed=skewed,
            secret_index=secret_index, body_sha256=digest)
        if inserted:
            return Recorded(True, ACCEPTED)
        key = stored_webhook_id(webhook_id)
        row = (await session.exec(select(SisbajudNotice.state, SisbajudNotice.body_sha256)
                                  .where(SisbajudNotice.webhook_id == key))).first()
        state, recorded = row if row is not None else (None, None)
        if recorded is not None and recorded != digest:
            await raise_alarm(
                session, AlarmCode.NOTICE_ID_REUSED.value,
                f"Delivery {key} came again with a different signed body; the first one "
                "recorded stands and this one is not executed",
                webhook_id=key, order_id=order_id, revision=revision,
                recorded_sha256=recorded, received_sha256=digest)
            await session.commit()
            return Recorded(False, state, reused=True)
        return Recorded(False, ACCEPTED if parked_reason else state)


async def settle_delivery(sessions: Sessions, webhook_id: str, *, state: str, reason: str,
                          order_id: str, alarm: AlarmCode | None = None,
                          **details: Any) -> bool:
    """ACCEPTED -> `state` (withdrawn, parked) with its alarm; False if the tick took it first."""
    async with sessions() as session:
        return await settle_notice(session, webhook_id, state=state, reason=reason,
                                   order_id=order_id, alarm=alarm, **details)


def count_delivery(status_code: int, seconds: float) -> None:
    """One answered delivery in the gateway's metrics."""
    NOTICES.labels(str(status_code)).inc()
    NOTICE_SECONDS.observe(seconds)

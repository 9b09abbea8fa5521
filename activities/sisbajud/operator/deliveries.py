"""The webhook gateway's writes: record a signed delivery, settle it after the order fetch."""

from __future__ import annotations

from typing import Any

from activities.sisbajud.metrics import NOTICE_SECONDS, NOTICES
from activities.sisbajud.notices import ACCEPTED, PARKED, WITHDRAWN, notice_state, settle_notice
from activities.sisbajud.operator.trail import Sessions
from activities.sisbajud.store import record_notice
from shared.contracts.sisbajud import AlarmCode

__all__ = ["ACCEPTED", "PARKED", "WITHDRAWN", "count_delivery", "record_delivery",
           "settle_delivery"]


async def record_delivery(sessions: Sessions, *, webhook_id: str, order_id: str | None,
                          revision: int | None, parked_reason: str | None, body: bytes,
                          skew_s: int | None, skewed: bool, secret_index: int | None
                          ) -> tuple[bool, str | None]:
    """Record the delivery once per `webhook-id`; (whether this call inserted it, the state
    it is in: ACCEPTED when new or parked, else what the tick or the gateway made of it)."""
    async with sessions() as session:
        inserted = await record_notice(
            session, webhook_id=webhook_id, order_id=order_id, revision=revision,
            parked_reason=parked_reason, body=body, skew_s=skew_s, skewed=skewed,
            secret_index=secret_index)
        if inserted or parked_reason:
            return inserted, ACCEPTED
        return inserted, await notice_state(session, webhook_id)


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

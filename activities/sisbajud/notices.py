"""A recorded delivery after its order was fetched: its state, and settling it."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.orders import AlarmCode
from activities.sisbajud.models import SisbajudNotice
from activities.sisbajud.store import raise_alarm, stored_webhook_id

ACCEPTED, WITHDRAWN, PARKED = "ACCEPTED", "WITHDRAWN", "PARKED"


async def notice_state(session: AsyncSession, webhook_id: str) -> str | None:
    """State of the delivery recorded under `webhook_id`, None when there is none."""
    return (await session.exec(select(SisbajudNotice.state).where(
        SisbajudNotice.webhook_id == stored_webhook_id(webhook_id)))).first()


async def settle_notice(session: AsyncSession, webhook_id: str, *, state: str, reason: str,
                        order_id: str, alarm: AlarmCode | None = None, **details: Any) -> bool:
    """ACCEPTED -> `state` with its alarm in one transaction; False if the tick took it first."""
    key = stored_webhook_id(webhook_id)
    # Conditional: once the tick has handed the notice on, the order's workflow fetches
    # and decides the same way, so the gateway neither moves it nor raises a second alarm.
    moved = await session.exec(update(SisbajudNotice).where(  # type: ignore[call-overload]
        SisbajudNotice.webhook_id == key, SisbajudNotice.state == ACCEPTED,
    ).values(state=state, reason=reason))
    if moved.rowcount and alarm is not None:
        await raise_alarm(session, alarm.value,
                          f"Delivery {key} for order {order_id} parked: {reason}",
                          order_id=order_id, webhook_id=key, reason=reason, **details)
    await session.commit()
    return bool(moved.rowcount)

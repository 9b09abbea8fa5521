"""The turnstile Monitor: authenticate its pushes, record exits, point a controller at us."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import monitor
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.turnstile_client import TurnstileError
from activities.pickup.wiring import dev_turnstile_url, turnstile_clients
from shared.auth import keys_match
from shared.contracts.pickup import PickupErrorCode
from shared.db.models import utcnow
from shared.db.pickup_models import School
from shared.settings import PickupSettings, Settings

Sessions = async_sessionmaker[AsyncSession]


def check_token(settings: PickupSettings, token: str) -> None:
    """Refuse a push whose path token is not the configured one (constant-time compare)."""
    expected = settings.monitor_token
    if expected is None or not keys_match(token, expected.get_secret_value()):
        raise pickup_error(PickupErrorCode.MONITOR_UNAUTHORIZED, "Unknown monitor token.")


async def record_exits(sessions: Sessions, kicker: Kicker, *, school_id: int,
                       body: Any) -> list[int]:
    """Students picked up by the access-granted logs of a `/dao` push (repeats change nothing)."""
    picked, controllers = [], set()
    async with sessions() as session, session.begin():
        for log_id, device_user in monitor.granted_users(body if isinstance(body, dict) else {}):
            change = await monitor.record_exit(session, controller=school_id, log_id=log_id,
                                               device_user=device_user, at=utcnow())
            if change is not None:
                picked.append(change.student.id)
                controllers |= change.controllers
    await kicker.drains(controllers)
    return picked


async def configure_monitor(sessions: Sessions, settings: Settings, *, school_id: int,
                            public_base_url: str) -> httpx.URL:
    """Point the school's controller Monitor at our monitor route (token in the path)."""
    async with sessions() as session:
        school = await session.get(School, school_id)
    if school is None:
        raise not_found("School", school_id)
    pickup = settings.pickup
    base = school.turnstile_url or dev_turnstile_url(settings)
    if pickup.monitor_token is None:
        raise pickup_error(PickupErrorCode.TURNSTILE_UNAVAILABLE,
                           "Set ESTEIRA_PICKUP__MONITOR_TOKEN first.")
    token = pickup.monitor_token.get_secret_value()
    target = httpx.URL(public_base_url.rstrip("/")
                       + f"/api/pickup/turnstile/monitor/{school_id}/{token}")
    async with httpx.AsyncClient() as http:
        try:
            await turnstile_clients(pickup, http).for_url(base).configure_monitor(target)
        except TurnstileError as exc:
            raise pickup_error(PickupErrorCode.TURNSTILE_UNAVAILABLE, str(exc)) from None
    return target

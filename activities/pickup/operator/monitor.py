"""The turnstile Monitor: authenticate its pushes, record exits, point a controller at us."""

from __future__ import annotations

from typing import Any

import httpx

from activities.pickup import monitor, monitor_tokens
from activities.pickup.contracts.board import PickupErrorCode
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.models import School
from activities.pickup.records import audit
from activities.pickup.turnstile_client import TurnstileError
from activities.pickup.wiring import dev_turnstile_url, turnstile_clients
from shared.db.engine import Sessions
from shared.db.models import utcnow
from shared.settings import Settings


class TurnstileMonitor:
    """The controllers' Monitor pushes (Control iD's own shapes) and their per-school token."""

    def __init__(self, sessions: Sessions, kicker: Kicker, settings: Settings) -> None:
        self._sessions = sessions
        self._kicker = kicker
        self._settings = settings

    async def check_token(self, *, school_id: int, token: str) -> None:
        """Refuse a push whose path token is not that school's own (constant-time compare)."""
        fallback = self._settings.pickup.monitor_token
        async with self._sessions() as session:
            await monitor_tokens.check_token(
                session, school_id=school_id, token=token,
                fallback=fallback.get_secret_value() if fallback else None)

    async def record_exits(self, *, school_id: int, body: Any) -> list[int]:
        """Students picked up by the access-granted logs of a `/dao` push (repeats change
        nothing)."""
        picked: list[int] = []
        controllers: set[int] = set()
        notes = 0
        async with self._sessions() as session, session.begin():
            for log_id, device_user in monitor.granted_users(
                    body if isinstance(body, dict) else {}):
                change = await monitor.record_exit(session, controller=school_id,
                                                   log_id=log_id, device_user=device_user,
                                                   at=utcnow())
                if change is not None:
                    picked.append(change.student.id)
                    controllers |= change.controllers
                    notes += change.notifications
        await self._kicker.drains(controllers, notes > 0)
        return picked

    async def configure(self, *, school_id: int, public_base_url: str,
                        actor: str) -> httpx.URL:
        """Point the school's controller Monitor at our monitor route with a new token of the
        school's own in the path; stored once the controller took it (the old one then
        stops), audited as `actor`."""
        async with self._sessions() as session:
            school = await session.get(School, school_id)
        if school is None:
            raise not_found("School", school_id)
        base = school.turnstile_url or dev_turnstile_url(self._settings)
        token, digest = monitor_tokens.new_token()
        target = httpx.URL(public_base_url.rstrip("/")
                           + f"/api/pickup/turnstile/monitor/{school_id}/{token}")
        async with httpx.AsyncClient() as http:
            try:
                await turnstile_clients(self._settings.pickup, http).for_url(
                    base).configure_monitor(target)
            except TurnstileError as exc:
                raise pickup_error(PickupErrorCode.TURNSTILE_UNAVAILABLE, str(exc)) from None
        async with self._sessions() as session, session.begin():
            await monitor_tokens.store_token(session, school_id=school_id, digest=digest)
            # The token itself stays out of the audit: the controller is its only holder.
            audit(session, entity="school", entity_id=school_id, action="monitor-configured",
                  actor=actor, at=utcnow(), school_id=school_id,
                  monitor=f"{target.scheme}://{target.host}:{target.port}")
        return target

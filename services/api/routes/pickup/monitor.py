"""Where turnstile controllers push Monitor events; the token in the path authenticates."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from activities.pickup.errors import pickup_error
from activities.pickup.monitor import granted_users, record_exit
from services.api.routes.pickup.deps import Kick, Pickup, Sessions
from shared.auth import keys_match
from shared.contracts.pickup import PickupErrorCode
from shared.db.models import utcnow

router = APIRouter(prefix="/turnstile/monitor/{school_id}/{token}")


def _check(token: str, pickup) -> None:
    expected = pickup.monitor_token
    if expected is None or not keys_match(token, expected.get_secret_value()):
        raise pickup_error(PickupErrorCode.MONITOR_UNAUTHORIZED, "Unknown monitor token.")


@router.post("/dao")
async def dao(school_id: int, token: str, request: Request, sessions: Sessions, pickup: Pickup,
              kick: Kick) -> dict[str, Any]:
    """Access-log inserts; an access granted to a READY student's credential is the exit."""
    _check(token, pickup)
    body = await request.json()
    picked, controllers = [], set()
    async with sessions() as session, session.begin():
        for log_id, device_user in granted_users(body if isinstance(body, dict) else {}):
            change = await record_exit(session, controller=school_id, log_id=log_id,
                                       device_user=device_user, at=utcnow())
            if change is not None:
                picked.append(change.student.id)
                controllers |= change.controllers
    await kick.drains(controllers)
    return {"picked_up": picked}


@router.post("/{endpoint}")
async def other(school_id: int, token: str, endpoint: str, pickup: Pickup) -> dict[str, str]:
    """`catra_event`, `device_is_alive`, …: acknowledged (the `dao` log carries the decision)."""
    _check(token, pickup)
    return {"ok": endpoint}

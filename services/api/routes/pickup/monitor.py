"""Where turnstile controllers push Monitor events; the token in the path authenticates."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from activities.pickup.operator import monitor
from services.api.routes.pickup.deps import Kick, Pickup, Sessions
from shared.errors import ErrorCode, EsteiraError

router = APIRouter(prefix="/turnstile/monitor/{school_id}/{token}")


@router.post("/dao")
async def dao(school_id: int, token: str, request: Request, sessions: Sessions, pickup: Pickup,
              kick: Kick) -> dict[str, Any]:
    """Access-log inserts; an access granted to a READY student's credential is the exit."""
    await monitor.check_token(sessions, pickup, school_id=school_id, token=token)
    picked = await monitor.record_exits(sessions, kick, school_id=school_id,
                                        body=await _json(request))
    return {"picked_up": picked}


async def _json(request: Request) -> Any:
    try:
        return await request.json()
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are
        raise EsteiraError(ErrorCode.REQUEST_INVALID, "The body is not JSON.") from exc


@router.post("/{endpoint}")
async def other(school_id: int, token: str, endpoint: str, sessions: Sessions,
                pickup: Pickup) -> dict[str, str]:
    """`catra_event`, `device_is_alive`, …: acknowledged (the `dao` log carries the decision)."""
    await monitor.check_token(sessions, pickup, school_id=school_id, token=token)
    return {"ok": endpoint}

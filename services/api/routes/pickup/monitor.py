"""Where turnstile controllers push Monitor events; the token in the path authenticates.

The pushes are Control iD's own shapes (`/dao`: `{"object_changes": [...], "device_id": …}`),
read as they come; the answers are ours."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from services.api.routes.pickup.answers import Acknowledged, PickedUp
from services.app_context import PickupFace
from shared.errors import ErrorCode, EsteiraError

router = APIRouter(prefix="/turnstile/monitor/{school_id}/{token}")


@router.post("/dao", response_model=PickedUp)
async def dao(school_id: int, token: str, request: Request, pickup: PickupFace) -> PickedUp:
    """Access-log inserts; an access granted to a READY student's credential is the exit."""
    await pickup.monitor.check_token(school_id=school_id, token=token)
    picked = await pickup.monitor.record_exits(school_id=school_id, body=await _json(request))
    return PickedUp(picked_up=picked)


async def _json(request: Request) -> Any:
    try:
        return await request.json()
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are
        raise EsteiraError(ErrorCode.REQUEST_INVALID, "The body is not JSON.") from exc


@router.post("/{endpoint}", response_model=Acknowledged)
async def other(school_id: int, token: str, endpoint: str, pickup: PickupFace) -> Acknowledged:
    """`catra_event`, `device_is_alive`, …: acknowledged (the `dao` log carries the decision)."""
    await pickup.monitor.check_token(school_id=school_id, token=token)
    return Acknowledged(ok=endpoint)

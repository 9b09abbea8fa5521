"""The school day by hand: an operator closes today (idempotent per school day)."""

from __future__ import annotations

from fastapi import APIRouter

from services.api.routes.pickup.answers import DayClosed
from services.api.routes.pickup.deps import Actor
from services.app_context import PickupFace

router = APIRouter()


@router.post("/schools/{school_id}/day/close", response_model=DayClosed)
async def close_day(school_id: int, pickup: PickupFace, actor: Actor) -> DayClosed:
    """Every student AT_SCHOOL ("novo dia letivo"), READY grants revoked, arrival signals
    closed; a second call the same school day changes nothing (`closed: false`)."""
    closure = await pickup.day.close(school_id=school_id, actor=actor)
    day = closure.day.isoformat()
    return DayClosed(school_id=closure.school_id, day=closure.day, closed=closure.closed,
                     students_reset=closure.students, grants_revoked=closure.revoked,
                     arrivals_closed=closure.arrivals_closed,
                     detail=(f"Day {day} closed." if closure.closed else
                             f"Day {day} was already closed; nothing changed."))

"""The school day by hand: an operator closes today (idempotent per school day)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from activities.pickup.operator import day as school_day
from services.api.routes.pickup.deps import Actor, Kick, Sessions

router = APIRouter()


@router.post("/schools/{school_id}/day/close")
async def close_day(school_id: int, sessions: Sessions, actor: Actor,
                    kick: Kick) -> dict[str, Any]:
    """Every student AT_SCHOOL ("novo dia letivo"), READY grants revoked, arrival signals
    closed; a second call the same school day changes nothing (`closed: false`)."""
    closure = await school_day.close_day(sessions, kick, school_id=school_id, actor=actor)
    return {
        "school_id": closure.school_id, "day": closure.day.isoformat(), "closed": closure.closed,
        "students_reset": closure.students, "grants_revoked": closure.revoked,
        "arrivals_closed": closure.arrivals_closed,
        "detail": (f"Day {closure.day.isoformat()} closed." if closure.closed else
                   f"Day {closure.day.isoformat()} was already closed; nothing changed."),
    }

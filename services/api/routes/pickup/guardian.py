"""The guardian app: its students and "I'm arriving", authenticated by access tokens."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from activities.pickup.access import linked_students, require_link
from activities.pickup.board import signal_arrival
from services.api.routes.pickup.deps import GuardianId, Kick, Sessions
from services.api.routes.pickup.schemas import Arrivals
from shared.db.models import utcnow

router = APIRouter(prefix="/guardian")


@router.get("/students")
async def my_students(guardian_id: GuardianId, sessions: Sessions) -> list[dict[str, Any]]:
    """Students the guardian may pick up now (expired temporary links excluded)."""
    async with sessions() as session:
        students = await linked_students(session, guardian_id, utcnow())
    return [s.model_dump(mode="json") for s in students]


@router.post("/arrivals")
async def arriving(body: Arrivals, guardian_id: GuardianId, sessions: Sessions,
                   kick: Kick) -> list[dict[str, Any]]:
    """"Estou chegando" for some students; 403 for any the guardian may not pick up now."""
    now = utcnow()
    timers, students = [], []
    async with sessions() as session, session.begin():
        for student_id in body.student_ids:
            await require_link(session, guardian_id, student_id, now)
        for student_id in body.student_ids:
            change = await signal_arrival(session, student_id=student_id,
                                          guardian_id=guardian_id, at=now,
                                          actor=f"guardian:{guardian_id}")
            timers += change.timers
            students.append(change.student.model_dump(mode="json"))
    await kick.after(timers=timers)
    return students

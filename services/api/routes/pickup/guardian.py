"""The guardian app: its students and "I'm arriving", authenticated by access tokens."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from activities.pickup.operator import access
from services.api.routes.pickup.answers import (
    StudentList,
)
from services.api.routes.pickup.deps import GuardianId, Kick, Sessions
from services.api.routes.pickup.schemas import Arrivals

router = APIRouter(prefix="/guardian")


@router.get("/students", response_model=StudentList)
async def my_students(guardian_id: GuardianId, sessions: Sessions) -> list[dict[str, Any]]:
    """Students the guardian may pick up now (expired temporary links excluded)."""
    students = await access.linked_students(sessions, guardian_id)
    return [s.model_dump(mode="json") for s in students]


@router.post("/arrivals", response_model=StudentList)
async def arriving(body: Arrivals, guardian_id: GuardianId, sessions: Sessions,
                   kick: Kick) -> list[dict[str, Any]]:
    """"Estou chegando" for some students; 403 for any the guardian may not pick up now."""
    students = await access.signal_arrivals(sessions, kick, guardian_id=guardian_id,
                                            student_ids=body.student_ids)
    return [s.model_dump(mode="json") for s in students]

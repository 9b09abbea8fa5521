"""The guardian app: its students and "I'm arriving", authenticated by access tokens."""

from __future__ import annotations

from fastapi import APIRouter

from services.api.routes.pickup.answers import Student, paged
from services.api.routes.pickup.deps import Cursor, GuardianId, Limit
from services.api.routes.pickup.schemas import Arrivals
from services.app_context import PickupFace
from shared.wire import PageOut

router = APIRouter(prefix="/guardian")


@router.get("/students", response_model=PageOut[Student])
async def my_students(guardian_id: GuardianId, pickup: PickupFace, limit: Limit = 100,
                      cursor: Cursor = None) -> PageOut[Student]:
    """Students the guardian may pick up now (expired temporary links excluded), id order."""
    return paged(Student, await pickup.access.linked_students(guardian_id, limit=limit,
                                                              cursor=cursor))


@router.post("/arrivals", response_model=list[Student])
async def arriving(body: Arrivals, guardian_id: GuardianId, pickup: PickupFace
                   ) -> list[Student]:
    """"Estou chegando" for some students; 403 for any the guardian may not pick up now."""
    students = await pickup.access.signal_arrivals(guardian_id=guardian_id,
                                                   student_ids=body.student_ids)
    return [Student.model_validate(s) for s in students]

"""Grant credentials: set a student's, guardian's or authorized person's card / QR code."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter

from activities.pickup.operator import credentials
from activities.pickup.operator import scope as school_scope
from services.api.routes.pickup.credential_schemas import (
    GuardianCredential,
    PersonCredential,
    StudentCredential,
)
from services.api.routes.pickup.deps import Actor, Kick, Pickup, SchoolScope, Sessions

router = APIRouter()


@router.put("/authorized-persons/{person_id}/credential")
async def set_person_credential(person_id: int, body: PersonCredential, sessions: Sessions,
                                actor: Actor, kick: Kick) -> dict[str, Any]:
    """Card / QR code, unique per school (409); an approved person's is swapped on the device."""
    return (await credentials.set_person_credential(
        sessions, kick, person_id=person_id, card_value=body.card_value, qr_value=body.qr_value,
        actor=actor)).model_dump(mode="json")


@router.put("/students/{student_id}/credential")
async def set_student_credential(student_id: int, body: StudentCredential, sessions: Sessions,
                                 actor: Actor, kick: Kick, pickup: Pickup,
                                 scope: SchoolScope) -> dict[str, Any]:
    """The student's own card / QR code (its READY exit credential), unique per school (409);
    a READY student's is swapped on the device."""
    await school_scope.check_student(sessions, scope, student_id)
    return (await credentials.set_student_credential(
        sessions, kick, student_id=student_id, card_value=body.card_value,
        qr_value=body.qr_value, actor=actor,
        ready_timeout=timedelta(minutes=pickup.ready_timeout_minutes))).model_dump(mode="json")


@router.put("/guardians/{guardian_id}/credential")
async def set_guardian_credential(guardian_id: int, body: GuardianCredential,
                                  sessions: Sessions, actor: Actor, scope: SchoolScope,
                                  kick: Kick) -> dict[str, Any]:
    """Card / QR code at one school, unique there (409); a school-scoped key, its own only."""
    school_id = school_scope.school_filter(scope, body.school_id)
    return (await credentials.set_guardian_credential(
        sessions, guardian_id=guardian_id, school_id=school_id, card_value=body.card_value,
        qr_value=body.qr_value, actor=actor, kicker=kick)).model_dump(mode="json")

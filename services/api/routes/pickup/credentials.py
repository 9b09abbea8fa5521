"""Grant credentials: set a student's, guardian's or authorized person's card / QR code."""

from __future__ import annotations

from fastapi import APIRouter

from services.api.routes.pickup.answers import Credential
from services.api.routes.pickup.credential_schemas import (
    GuardianCredential,
    PersonCredential,
    StudentCredential,
)
from services.api.routes.pickup.deps import Actor, SchoolScope
from services.app_context import PickupFace

router = APIRouter()


@router.put("/authorized-persons/{person_id}/credential", response_model=Credential)
async def set_person_credential(person_id: int, body: PersonCredential, pickup: PickupFace,
                                actor: Actor) -> Credential:
    """Card / QR code, unique per school (409); an approved person's is swapped on the device."""
    return Credential.model_validate(await pickup.credentials.set_person_credential(
        person_id=person_id, card_value=body.card_value, qr_value=body.qr_value, actor=actor))


@router.put("/students/{student_id}/credential", response_model=Credential)
async def set_student_credential(student_id: int, body: StudentCredential, pickup: PickupFace,
                                 actor: Actor, scope: SchoolScope) -> Credential:
    """The student's own card / QR code (its READY exit credential), unique per school (409);
    a READY student's is swapped on the device."""
    await pickup.scope.check_student(scope, student_id)
    return Credential.model_validate(await pickup.credentials.set_student_credential(
        student_id=student_id, card_value=body.card_value, qr_value=body.qr_value,
        actor=actor))


@router.put("/guardians/{guardian_id}/credential", response_model=Credential)
async def set_guardian_credential(guardian_id: int, body: GuardianCredential,
                                  pickup: PickupFace, actor: Actor,
                                  scope: SchoolScope) -> Credential:
    """Card / QR code at one school, unique there (409); a school-scoped key, its own only."""
    school_id = pickup.scope.school_filter(scope, body.school_id)
    return Credential.model_validate(await pickup.credentials.set_guardian_credential(
        guardian_id=guardian_id, school_id=school_id, card_value=body.card_value,
        qr_value=body.qr_value, actor=actor))

"""Records of the pickup domain: schools, students, guardians, links, tokens, authorizations."""

from __future__ import annotations

from fastapi import APIRouter

from services.api.routes.pickup.answers import (
    AuthorizedPerson,
    EarlyRelease,
    Guardian,
    GuardianLink,
    IssuedToken,
    School,
    Student,
)
from services.api.routes.pickup.deps import Actor, SchoolScope
from services.api.routes.pickup.schemas import (
    NewAuthorizedPerson,
    NewEarlyRelease,
    NewGuardian,
    NewLink,
    NewSchool,
    NewStudent,
    NewToken,
    PersonDecision,
    ReleaseDecision,
    Versioned,
)
from services.app_context import PickupFace

router = APIRouter()


@router.post("/schools", status_code=201, response_model=School)
async def create_school(body: NewSchool, pickup: PickupFace, actor: Actor,
                        scope: SchoolScope) -> School:
    """A school with its arrival-signal timeout and (optionally) its controller's URL."""
    pickup.scope.require_global(scope, "Creating a school")
    return School.model_validate(await pickup.schools.create(**body.model_dump(), actor=actor))


@router.get("/schools/{school_id}", response_model=School)
async def get_school(school_id: int, pickup: PickupFace) -> School:
    """One school."""
    return School.model_validate(await pickup.schools.get(school_id))


@router.post("/students", status_code=201, response_model=Student)
async def create_student(body: NewStudent, pickup: PickupFace, actor: Actor,
                         scope: SchoolScope) -> Student:
    """A student, AT_SCHOOL, with its own card / QR code if given (409 if taken there)."""
    pickup.scope.check_school(scope, body.school_id)
    return Student.model_validate(await pickup.records.create_student(**body.model_dump(),
                                                                      actor=actor))


@router.post("/guardians", status_code=201, response_model=Guardian)
async def create_guardian(body: NewGuardian, pickup: PickupFace, actor: Actor,
                          scope: SchoolScope) -> Guardian:
    """A guardian, with their card / QR code at a school if given (409 if taken there)."""
    # A school-scoped key registers the guardian for its own school.
    school_id = pickup.scope.school_filter(scope, body.school_id)
    return Guardian.model_validate(await pickup.records.create_guardian(
        **{**body.model_dump(), "school_id": school_id}, actor=actor))


@router.post("/links", status_code=201, response_model=GuardianLink)
async def link_guardian(body: NewLink, pickup: PickupFace, actor: Actor,
                        scope: SchoolScope) -> GuardianLink:
    """Link a guardian to a student (`StudentRosterChanged` for the guardian's app)."""
    await pickup.scope.check_student(scope, body.student_id)
    await pickup.scope.check_guardian(scope, body.guardian_id)
    return GuardianLink.model_validate(await pickup.access.link_guardian(
        **body.model_dump(), actor=actor))


@router.post("/guardians/{guardian_id}/tokens", status_code=201, response_model=IssuedToken)
async def create_token(guardian_id: int, body: NewToken, pickup: PickupFace) -> IssuedToken:
    """A guardian-app access token; shown once."""
    raw, token = await pickup.access.issue_token(guardian_id=guardian_id,
                                                 ttl_hours=body.ttl_hours)
    return IssuedToken(token=raw, id=token.id, guardian_id=guardian_id,
                       expires_at=token.expires_at)


@router.post("/authorized-persons", status_code=201, response_model=AuthorizedPerson)
async def create_person(body: NewAuthorizedPerson, pickup: PickupFace, actor: Actor,
                        scope: SchoolScope) -> AuthorizedPerson:
    """Someone authorized to pick up (pending); a temporary one gets its expiry timer."""
    await pickup.scope.check_student(scope, body.student_id)
    return AuthorizedPerson.model_validate(await pickup.authorizations.create_person(
        **body.model_dump(), actor=actor))


@router.get("/authorized-persons/{person_id}", response_model=AuthorizedPerson)
async def get_person(person_id: int, pickup: PickupFace) -> AuthorizedPerson:
    """One authorized person, with its sync status."""
    return AuthorizedPerson.model_validate(await pickup.authorizations.person(person_id))


@router.post("/authorized-persons/{person_id}/{decision}", response_model=AuthorizedPerson)
async def decide(person_id: int, decision: PersonDecision, body: Versioned,
                 pickup: PickupFace, actor: Actor) -> AuthorizedPerson:
    """approve (grant on the turnstile) / request-adjustments / revoke (revocation if granted)."""
    return AuthorizedPerson.model_validate(await pickup.authorizations.decide_person(
        person_id=person_id, decision=decision, version=body.version, actor=actor))


@router.post("/early-releases", status_code=201, response_model=EarlyRelease)
async def create_release(body: NewEarlyRelease, pickup: PickupFace, actor: Actor,
                         scope: SchoolScope) -> EarlyRelease:
    """A dated, single-use early release (pending); its timer expires it unused."""
    await pickup.scope.check_student(scope, body.student_id)
    return EarlyRelease.model_validate(await pickup.authorizations.create_release(
        **body.model_dump(), actor=actor))


@router.get("/early-releases/{release_id}", response_model=EarlyRelease)
async def get_release(release_id: int, pickup: PickupFace) -> EarlyRelease:
    """One early release."""
    return EarlyRelease.model_validate(await pickup.authorizations.release(release_id))


@router.post("/early-releases/{release_id}/{decision}", response_model=EarlyRelease)
async def decide_release(release_id: int, decision: ReleaseDecision, body: Versioned,
                         pickup: PickupFace, actor: Actor) -> EarlyRelease:
    """approve (guardians notified) / request-adjustments / use (once, before its date)."""
    return EarlyRelease.model_validate(await pickup.authorizations.decide_release(
        release_id=release_id, decision=decision, version=body.version, actor=actor))

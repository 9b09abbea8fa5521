"""Records of the pickup domain: schools, students, guardians, links, tokens, authorizations."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter

from activities.pickup.operator import access, admin, authorizations
from activities.pickup.operator import scope as school_scope
from services.api.routes.pickup.answers import (
    GuardianAnswer,
    IssuedToken,
    LinkAnswer,
    PersonAnswer,
    ReleaseAnswer,
    SchoolAnswer,
    StudentAnswer,
)
from services.api.routes.pickup.deps import Actor, Kick, Pickup, SchoolScope, Sessions
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

router = APIRouter()


def _dump(row) -> dict[str, Any]:
    return row.model_dump(mode="json")


@router.post("/schools", status_code=201, response_model=SchoolAnswer)
async def create_school(body: NewSchool, sessions: Sessions, pickup: Pickup,
                        scope: SchoolScope) -> dict[str, Any]:
    """A school with its arrival-signal timeout and (optionally) its controller's URL."""
    school_scope.require_global(scope, "Creating a school")
    return _dump(await admin.create_school(
        sessions, name=body.name, turnstile_url=body.turnstile_url,
        arrival_timeout_minutes=body.arrival_timeout_minutes or pickup.arrival_timeout_minutes,
        time_zone=body.time_zone or pickup.day_time_zone,
        day_start=body.day_start or pickup.day_start))


@router.get("/schools/{school_id}", response_model=SchoolAnswer)
async def get_school(school_id: int, sessions: Sessions) -> dict[str, Any]:
    """One school."""
    return _dump(await admin.get_school(sessions, school_id))


@router.post("/students", status_code=201, response_model=StudentAnswer)
async def create_student(body: NewStudent, sessions: Sessions,
                         scope: SchoolScope) -> dict[str, Any]:
    """A student, AT_SCHOOL, with its own card / QR code if given (409 if taken there)."""
    await school_scope.check_school(scope, body.school_id)
    return _dump(await admin.create_student(sessions, **body.model_dump()))


@router.post("/guardians", status_code=201, response_model=GuardianAnswer)
async def create_guardian(body: NewGuardian, sessions: Sessions,
                          scope: SchoolScope) -> dict[str, Any]:
    """A guardian, with their card / QR code at a school if given (409 if taken there)."""
    # A school-scoped key registers the guardian for its own school.
    school_id = school_scope.school_filter(scope, body.school_id)
    return _dump(await admin.create_guardian(sessions, **{**body.model_dump(),
                                                          "school_id": school_id}))


@router.post("/links", status_code=201, response_model=LinkAnswer)
async def link_guardian(body: NewLink, sessions: Sessions, actor: Actor,
                        scope: SchoolScope, kick: Kick) -> dict[str, Any]:
    """Link a guardian to a student (`StudentRosterChanged` for the guardian's app)."""
    await school_scope.check_student(sessions, scope, body.student_id)
    await school_scope.check_guardian(sessions, scope, body.guardian_id)
    return _dump(await access.link_guardian(
        sessions, student_id=body.student_id, guardian_id=body.guardian_id, kind=body.kind,
        valid_from=body.valid_from, valid_until=body.valid_until, actor=actor, kicker=kick))


@router.post("/guardians/{guardian_id}/tokens", status_code=201,
              response_model=IssuedToken)
async def create_token(guardian_id: int, body: NewToken, sessions: Sessions,
                       pickup: Pickup) -> dict[str, Any]:
    """A guardian-app access token; shown once."""
    ttl = timedelta(hours=body.ttl_hours or pickup.token_ttl_hours)
    raw, token = await access.issue_token(sessions, guardian_id=guardian_id, ttl=ttl)
    return {"token": raw, "id": token.id, "guardian_id": guardian_id,
            "expires_at": token.expires_at.isoformat()}


@router.post("/authorized-persons", status_code=201, response_model=PersonAnswer)
async def create_person(body: NewAuthorizedPerson, sessions: Sessions, actor: Actor,
                        kick: Kick, scope: SchoolScope) -> dict[str, Any]:
    """Someone authorized to pick up (pending); a temporary one gets its expiry timer."""
    await school_scope.check_student(sessions, scope, body.student_id)
    return _dump(await authorizations.create_person(sessions, kick, **body.model_dump(),
                                                    actor=actor))


@router.get("/authorized-persons/{person_id}", response_model=PersonAnswer)
async def get_person(person_id: int, sessions: Sessions) -> dict[str, Any]:
    """One authorized person, with its sync status."""
    return _dump(await authorizations.get_person(sessions, person_id))


@router.post("/authorized-persons/{person_id}/{decision}", response_model=PersonAnswer)
async def decide(person_id: int, decision: PersonDecision, body: Versioned, sessions: Sessions,
                 actor: Actor, kick: Kick) -> dict[str, Any]:
    """approve (grant on the turnstile) / request-adjustments / revoke (revocation if granted)."""
    return _dump(await authorizations.decide_person(
        sessions, kick, person_id=person_id, decision=decision, version=body.version,
        actor=actor))


@router.post("/early-releases", status_code=201, response_model=ReleaseAnswer)
async def create_release(body: NewEarlyRelease, sessions: Sessions, actor: Actor,
                         kick: Kick, scope: SchoolScope) -> dict[str, Any]:
    """A dated, single-use early release (pending); its timer expires it unused."""
    await school_scope.check_student(sessions, scope, body.student_id)
    return _dump(await authorizations.create_release(sessions, kick, **body.model_dump(),
                                                     actor=actor))


@router.get("/early-releases/{release_id}", response_model=ReleaseAnswer)
async def get_release(release_id: int, sessions: Sessions) -> dict[str, Any]:
    """One early release."""
    return _dump(await authorizations.get_release(sessions, release_id))


@router.post("/early-releases/{release_id}/{decision}", response_model=ReleaseAnswer)
async def decide_release(release_id: int, decision: ReleaseDecision, body: Versioned,
                         sessions: Sessions, actor: Actor, kick: Kick) -> dict[str, Any]:
    """approve (guardians notified) / request-adjustments / use (once, before its date)."""
    return _dump(await authorizations.decide_release(
        sessions, release_id=release_id, decision=decision, version=body.version, actor=actor,
        kicker=kick))

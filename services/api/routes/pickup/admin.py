"""Records of the pickup domain: schools, students, guardians, links, tokens, authorizations."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter

from activities.pickup.access import create_link, issue_token
from activities.pickup.authorizations import decide_early_release, decide_person
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.records import audit
from services.api.routes.pickup.deps import Actor, Kick, Pickup, Sessions
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
from shared.contracts.pickup import Kind, PickupErrorCode, TimerInput, TimerKind
from shared.db.models import utcnow
from shared.db.pickup_models import AuthorizedPerson, EarlyRelease, Guardian, School, Student

router = APIRouter()


def _dump(row) -> dict[str, Any]:
    return row.model_dump(mode="json")


@router.post("/schools", status_code=201)
async def create_school(body: NewSchool, sessions: Sessions, pickup: Pickup) -> dict[str, Any]:
    """A school with its arrival-signal timeout and (optionally) its controller's URL."""
    school = School(name=body.name, turnstile_url=body.turnstile_url,
                    arrival_timeout_minutes=body.arrival_timeout_minutes
                    or pickup.arrival_timeout_minutes)
    async with sessions() as session, session.begin():
        session.add(school)
    return _dump(school)


@router.get("/schools/{school_id}")
async def get_school(school_id: int, sessions: Sessions) -> dict[str, Any]:
    """One school."""
    async with sessions() as session:
        school = await session.get(School, school_id)
    if school is None:
        raise not_found("School", school_id)
    return _dump(school)


@router.post("/students", status_code=201)
async def create_student(body: NewStudent, sessions: Sessions) -> dict[str, Any]:
    """A student, AT_SCHOOL."""
    async with sessions() as session, session.begin():
        if await session.get(School, body.school_id) is None:
            raise not_found("School", body.school_id)
        student = Student(school_id=body.school_id, name=body.name)
        session.add(student)
    return _dump(student)


@router.post("/guardians", status_code=201)
async def create_guardian(body: NewGuardian, sessions: Sessions) -> dict[str, Any]:
    """A guardian."""
    guardian = Guardian(name=body.name, contact=body.contact)
    async with sessions() as session, session.begin():
        session.add(guardian)
    return _dump(guardian)


@router.post("/links", status_code=201)
async def link_guardian(body: NewLink, sessions: Sessions, actor: Actor) -> dict[str, Any]:
    """Link a guardian to a student (`StudentRosterChanged` for the guardian's app)."""
    async with sessions() as session, session.begin():
        link = await create_link(session, student_id=body.student_id,
                                 guardian_id=body.guardian_id, kind=body.kind,
                                 valid_from=body.valid_from, valid_until=body.valid_until,
                                 at=utcnow(), actor=actor)
    return _dump(link)


@router.post("/guardians/{guardian_id}/tokens", status_code=201)
async def create_token(guardian_id: int, body: NewToken, sessions: Sessions,
                       pickup: Pickup) -> dict[str, Any]:
    """A guardian-app access token; shown once."""
    ttl = timedelta(hours=body.ttl_hours or pickup.token_ttl_hours)
    async with sessions() as session, session.begin():
        raw, token = await issue_token(session, guardian_id=guardian_id, ttl=ttl, at=utcnow())
    return {"token": raw, "guardian_id": guardian_id, "expires_at": token.expires_at.isoformat()}


@router.post("/authorized-persons", status_code=201)
async def create_person(body: NewAuthorizedPerson, sessions: Sessions, actor: Actor,
                        kick: Kick) -> dict[str, Any]:
    """Someone authorized to pick up (pending); a temporary one gets its expiry timer."""
    dated = body.valid_from is not None or body.valid_until is not None
    if (body.kind == Kind.PERMANENT and dated) or (
            body.kind == Kind.TEMPORARY and body.valid_until is None):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY,
                           "Temporary authorizations need valid_until; permanent ones no dates.")
    now = utcnow()
    async with sessions() as session, session.begin():
        student = await session.get(Student, body.student_id)
        if student is None:
            raise not_found("Student", body.student_id)
        person = AuthorizedPerson(**body.model_dump(), created_at=now, updated_at=now)
        session.add(person)
        await session.flush()
        audit(session, entity="authorized_person", entity_id=person.id, action="created",
              actor=actor, at=now, to_state=person.status, kind=body.kind)
    if body.kind == Kind.TEMPORARY:
        await kick.timers([TimerInput(kind=TimerKind.AUTHORIZATION, entity_id=person.id,
                                      deadline=body.valid_until, school_id=student.school_id,
                                      student_id=body.student_id)])
    return _dump(person)


@router.get("/authorized-persons/{person_id}")
async def get_person(person_id: int, sessions: Sessions) -> dict[str, Any]:
    """One authorized person, with its sync status."""
    async with sessions() as session:
        person = await session.get(AuthorizedPerson, person_id)
    if person is None:
        raise not_found("Authorized person", person_id)
    return _dump(person)


@router.post("/authorized-persons/{person_id}/{decision}")
async def decide(person_id: int, decision: PersonDecision, body: Versioned, sessions: Sessions,
                 actor: Actor, kick: Kick) -> dict[str, Any]:
    """approve (grant on the turnstile) / request-adjustments / revoke (revocation if granted)."""
    async with sessions() as session, session.begin():
        person, controllers = await decide_person(session, person_id=person_id,
                                                  decision=decision, version=body.version,
                                                  at=utcnow(), actor=actor)
    await kick.drains(controllers)
    return _dump(person)


@router.post("/early-releases", status_code=201)
async def create_release(body: NewEarlyRelease, sessions: Sessions,
                         actor: Actor) -> dict[str, Any]:
    """A dated, single-use early release (pending)."""
    now = utcnow()
    async with sessions() as session, session.begin():
        if await session.get(Student, body.student_id) is None:
            raise not_found("Student", body.student_id)
        release = EarlyRelease(**body.model_dump(), created_at=now)
        session.add(release)
        await session.flush()
        audit(session, entity="early_release", entity_id=release.id, action="created",
              actor=actor, at=now, to_state=release.status)
    return _dump(release)


@router.get("/early-releases/{release_id}")
async def get_release(release_id: int, sessions: Sessions) -> dict[str, Any]:
    """One early release."""
    async with sessions() as session:
        release = await session.get(EarlyRelease, release_id)
    if release is None:
        raise not_found("Early release", release_id)
    return _dump(release)


@router.post("/early-releases/{release_id}/{decision}")
async def decide_release(release_id: int, decision: ReleaseDecision, body: Versioned,
                         sessions: Sessions, actor: Actor) -> dict[str, Any]:
    """approve / request-adjustments / use (once, before its date passes)."""
    async with sessions() as session, session.begin():
        release = await decide_early_release(session, release_id=release_id, decision=decision,
                                             version=body.version, at=utcnow(), actor=actor)
    return _dump(release)

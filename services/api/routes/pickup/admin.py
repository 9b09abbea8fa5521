"""Records of the pickup domain: schools, students, guardians, links, tokens, authorizations."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi import APIRouter

from activities.pickup.operator import access, admin, authorizations
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

router = APIRouter()


def _dump(row) -> dict[str, Any]:
    return row.model_dump(mode="json")


@router.post("/schools", status_code=201)
async def create_school(body: NewSchool, sessions: Sessions, pickup: Pickup) -> dict[str, Any]:
    """A school with its arrival-signal timeout and (optionally) its controller's URL."""
    return _dump(await admin.create_school(
        sessions, name=body.name, turnstile_url=body.turnstile_url,
        arrival_timeout_minutes=body.arrival_timeout_minutes or pickup.arrival_timeout_minutes))


@router.get("/schools/{school_id}")
async def get_school(school_id: int, sessions: Sessions) -> dict[str, Any]:
    """One school."""
    return _dump(await admin.get_school(sessions, school_id))


@router.post("/students", status_code=201)
async def create_student(body: NewStudent, sessions: Sessions) -> dict[str, Any]:
    """A student, AT_SCHOOL."""
    return _dump(await admin.create_student(sessions, school_id=body.school_id, name=body.name))


@router.post("/guardians", status_code=201)
async def create_guardian(body: NewGuardian, sessions: Sessions) -> dict[str, Any]:
    """A guardian."""
    return _dump(await admin.create_guardian(sessions, name=body.name, contact=body.contact))


@router.post("/links", status_code=201)
async def link_guardian(body: NewLink, sessions: Sessions, actor: Actor) -> dict[str, Any]:
    """Link a guardian to a student (`StudentRosterChanged` for the guardian's app)."""
    return _dump(await access.link_guardian(
        sessions, student_id=body.student_id, guardian_id=body.guardian_id, kind=body.kind,
        valid_from=body.valid_from, valid_until=body.valid_until, actor=actor))


@router.post("/guardians/{guardian_id}/tokens", status_code=201)
async def create_token(guardian_id: int, body: NewToken, sessions: Sessions,
                       pickup: Pickup) -> dict[str, Any]:
    """A guardian-app access token; shown once."""
    ttl = timedelta(hours=body.ttl_hours or pickup.token_ttl_hours)
    raw, token = await access.issue_token(sessions, guardian_id=guardian_id, ttl=ttl)
    return {"token": raw, "guardian_id": guardian_id, "expires_at": token.expires_at.isoformat()}


@router.post("/authorized-persons", status_code=201)
async def create_person(body: NewAuthorizedPerson, sessions: Sessions, actor: Actor,
                        kick: Kick) -> dict[str, Any]:
    """Someone authorized to pick up (pending); a temporary one gets its expiry timer."""
    return _dump(await authorizations.create_person(sessions, kick, **body.model_dump(),
                                                    actor=actor))


@router.get("/authorized-persons/{person_id}")
async def get_person(person_id: int, sessions: Sessions) -> dict[str, Any]:
    """One authorized person, with its sync status."""
    return _dump(await authorizations.get_person(sessions, person_id))


@router.post("/authorized-persons/{person_id}/{decision}")
async def decide(person_id: int, decision: PersonDecision, body: Versioned, sessions: Sessions,
                 actor: Actor, kick: Kick) -> dict[str, Any]:
    """approve (grant on the turnstile) / request-adjustments / revoke (revocation if granted)."""
    return _dump(await authorizations.decide_person(
        sessions, kick, person_id=person_id, decision=decision, version=body.version,
        actor=actor))


@router.post("/early-releases", status_code=201)
async def create_release(body: NewEarlyRelease, sessions: Sessions, actor: Actor,
                         kick: Kick) -> dict[str, Any]:
    """A dated, single-use early release (pending); its timer expires it unused."""
    return _dump(await authorizations.create_release(sessions, kick, **body.model_dump(),
                                                     actor=actor))


@router.get("/early-releases/{release_id}")
async def get_release(release_id: int, sessions: Sessions) -> dict[str, Any]:
    """One early release."""
    return _dump(await authorizations.get_release(sessions, release_id))


@router.post("/early-releases/{release_id}/{decision}")
async def decide_release(release_id: int, decision: ReleaseDecision, body: Versioned,
                         sessions: Sessions, actor: Actor) -> dict[str, Any]:
    """approve / request-adjustments / use (once, before its date passes)."""
    return _dump(await authorizations.decide_release(
        sessions, release_id=release_id, decision=decision, version=body.version, actor=actor))

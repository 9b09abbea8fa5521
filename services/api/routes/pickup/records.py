"""Pickup records administered: listed by school (paged), edited, deleted; guardian tokens."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from activities.pickup.contracts.board import AuthorizationStatus, PickupState
from activities.pickup.operator import editing, listing, persons, tokens
from activities.pickup.operator.scope import school_filter
from services.api.routes.pickup.admin_schemas import (
    GuardianChanges,
    LinkChanges,
    PersonChanges,
    StudentChanges,
)
from services.api.routes.pickup.answers import (
    GuardianAnswer,
    GuardianPage,
    LinkAnswer,
    LinkPage,
    PersonAnswer,
    PersonPage,
    StudentAnswer,
    StudentPage,
)
from services.api.routes.pickup.deps import Actor, Kick, SchoolScope, Sessions

router = APIRouter()

Limit = Annotated[int, Query(ge=1, le=listing.MAX_PAGE)]
# The id of the last row of the previous page (`nextCursor`).
Cursor = Annotated[int | None, Query(ge=0)]


def _page(page: listing.Page) -> dict[str, Any]:
    return {"items": [row.model_dump(mode="json") for row in page.items],
            "nextCursor": page.next_cursor}


def _gone() -> Response:
    return Response(status_code=204)


@router.get("/students", response_model=StudentPage)
async def list_students(sessions: Sessions, scope: SchoolScope, school_id: int | None = None,
                        state: PickupState | None = None, limit: Limit = 100,
                        cursor: Cursor = None) -> dict[str, Any]:
    """Students in id order, by school (a school-scoped key sees its own only)."""
    where = listing.RecordFilter(school_id=school_filter(scope, school_id), status=state)
    return _page(await listing.list_students(sessions, where, limit=limit, cursor=cursor))


@router.patch("/students/{student_id}", response_model=StudentAnswer)
async def update_student(student_id: int, body: StudentChanges, sessions: Sessions,
                         actor: Actor) -> dict[str, Any]:
    """Rename a student or set its registration (409 version-conflict on a stale revision)."""
    student = await editing.update_student(sessions, student_id=student_id,
                                           revision=body.revision,
                                           changes=body.changes("revision"), actor=actor)
    return student.model_dump(mode="json")


@router.delete("/students/{student_id}", status_code=204)
async def delete_student(student_id: int, sessions: Sessions, actor: Actor) -> Response:
    """Delete a student at school with nothing left linked to it (409 in-use otherwise)."""
    await editing.delete_student(sessions, student_id=student_id, actor=actor)
    return _gone()


@router.get("/guardians", response_model=GuardianPage)
async def list_guardians(sessions: Sessions, scope: SchoolScope, school_id: int | None = None,
                         limit: Limit = 100, cursor: Cursor = None) -> dict[str, Any]:
    """Guardians in id order; a school's are those it registered or linked."""
    where = listing.RecordFilter(school_id=school_filter(scope, school_id))
    return _page(await listing.list_guardians(sessions, where, limit=limit, cursor=cursor))


@router.patch("/guardians/{guardian_id}", response_model=GuardianAnswer)
async def update_guardian(guardian_id: int, body: GuardianChanges, sessions: Sessions,
                          actor: Actor) -> dict[str, Any]:
    """Change a guardian's name, contact or CPF."""
    guardian = await editing.update_guardian(sessions, guardian_id=guardian_id,
                                             revision=body.revision,
                                             changes=body.changes("revision"), actor=actor)
    return guardian.model_dump(mode="json")


@router.delete("/guardians/{guardian_id}", status_code=204)
async def delete_guardian(guardian_id: int, sessions: Sessions, actor: Actor,
                          kick: Kick) -> Response:
    """Delete a guardian with no links (409 in-use otherwise); its tokens go with it."""
    await editing.delete_guardian(sessions, guardian_id=guardian_id, actor=actor, kicker=kick)
    return _gone()


@router.get("/guardians/{guardian_id}/tokens")
async def list_tokens(guardian_id: int, sessions: Sessions) -> list[dict[str, Any]]:
    """The guardian's tokens (ids, kind — `app`, or `web` for a guardian page session —
    and dates; never the values)."""
    return [{"id": t.id, "guardian_id": t.guardian_id, "kind": t.kind,
             "created_at": t.created_at.isoformat(), "expires_at": t.expires_at.isoformat()}
            for t in await tokens.list_tokens(sessions, guardian_id)]


@router.post("/guardians/{guardian_id}/tokens/{token_id}/revoke", status_code=204)
async def revoke_token(guardian_id: int, token_id: int, sessions: Sessions,
                       actor: Actor) -> Response:
    """Revoke one app token: the guardian endpoints answer 401 to it from now on."""
    await tokens.revoke_token(sessions, guardian_id=guardian_id, token_id=token_id,
                              actor=actor)
    return _gone()


@router.get("/links", response_model=LinkPage)
async def list_links(sessions: Sessions, scope: SchoolScope, school_id: int | None = None,
                     student_id: int | None = None, guardian_id: int | None = None,
                     limit: Limit = 100, cursor: Cursor = None) -> dict[str, Any]:
    """Student–guardian links in id order."""
    where = listing.RecordFilter(school_id=school_filter(scope, school_id),
                                 student_id=student_id, guardian_id=guardian_id)
    return _page(await listing.list_links(sessions, where, limit=limit, cursor=cursor))


@router.patch("/links/{link_id}", response_model=LinkAnswer)
async def update_link(link_id: int, body: LinkChanges, sessions: Sessions,
                      actor: Actor, kick: Kick) -> dict[str, Any]:
    """Change a link's kind or window (`StudentRosterChanged` for the guardian's app)."""
    link = await editing.update_link(sessions, link_id=link_id, revision=body.revision,
                                     changes=body.changes("revision"), actor=actor,
                                     kicker=kick)
    return link.model_dump(mode="json")


@router.delete("/links/{link_id}", status_code=204)
async def delete_link(link_id: int, sessions: Sessions, actor: Actor, kick: Kick) -> Response:
    """Unlink a guardian (`StudentRosterChanged`: the app drops the student)."""
    await editing.delete_link(sessions, link_id=link_id, actor=actor, kicker=kick)
    return _gone()


@router.get("/authorized-persons", response_model=PersonPage)
async def list_persons(sessions: Sessions, scope: SchoolScope, school_id: int | None = None,
                       student_id: int | None = None,
                       status: AuthorizationStatus | None = None, limit: Limit = 100,
                       cursor: Cursor = None) -> dict[str, Any]:
    """Authorized persons in id order."""
    where = listing.RecordFilter(school_id=school_filter(scope, school_id),
                                 student_id=student_id, status=status)
    return _page(await listing.list_persons(sessions, where, limit=limit, cursor=cursor))


@router.patch("/authorized-persons/{person_id}", response_model=PersonAnswer)
async def edit_person(person_id: int, body: PersonChanges, sessions: Sessions, actor: Actor,
                      kick: Kick) -> dict[str, Any]:
    """Edit a pending person, or one after request-adjustments (back to pending)."""
    person = await persons.edit_person(sessions, kick, person_id=person_id,
                                       version=body.version, changes=body.changes("version"),
                                       actor=actor)
    return person.model_dump(mode="json")


@router.delete("/authorized-persons/{person_id}", status_code=204)
async def delete_person(person_id: int, sessions: Sessions, actor: Actor) -> Response:
    """Delete a person holding no badge (409 in-use while approved or revocation pending)."""
    await persons.delete_person(sessions, person_id=person_id, actor=actor)
    return _gone()

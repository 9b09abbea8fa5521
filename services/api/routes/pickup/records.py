"""Pickup records administered: listed by school (paged), edited, deleted; guardian tokens."""

from __future__ import annotations

from fastapi import APIRouter, Response

from activities.pickup.contracts.board import AuthorizationStatus, PickupState
from activities.pickup.operator import RecordFilter
from services.api.routes.pickup.admin_schemas import (
    GuardianChanges,
    LinkChanges,
    PersonChanges,
    StudentChanges,
)
from services.api.routes.pickup.answers import (
    AccessToken,
    AuthorizedPerson,
    Guardian,
    GuardianLink,
    Student,
    paged,
)
from services.api.routes.pickup.deps import Actor, Cursor, Limit, SchoolScope
from services.app_context import PickupFace
from shared.wire import PageOut

router = APIRouter()


def _gone() -> Response:
    return Response(status_code=204)


@router.get("/students", response_model=PageOut[Student])
async def list_students(pickup: PickupFace, scope: SchoolScope, school_id: int | None = None,
                        state: PickupState | None = None, limit: Limit = 100,
                        cursor: Cursor = None) -> PageOut[Student]:
    """Students in id order, by school (a school-scoped key sees its own only)."""
    where = RecordFilter(school_id=pickup.scope.school_filter(scope, school_id), status=state)
    return paged(Student, await pickup.listing.students(where, limit=limit, cursor=cursor))


@router.patch("/students/{student_id}", response_model=Student)
async def update_student(student_id: int, body: StudentChanges, pickup: PickupFace,
                         actor: Actor) -> Student:
    """Rename a student or set its registration (409 version-conflict on a stale revision)."""
    return Student.model_validate(await pickup.records.update_student(
        student_id=student_id, revision=body.revision, changes=body.changes("revision"),
        actor=actor))


@router.delete("/students/{student_id}", status_code=204)
async def delete_student(student_id: int, pickup: PickupFace, actor: Actor) -> Response:
    """Delete a student at school with nothing left linked to it (409 in-use otherwise)."""
    await pickup.records.delete_student(student_id=student_id, actor=actor)
    return _gone()


@router.get("/guardians", response_model=PageOut[Guardian])
async def list_guardians(pickup: PickupFace, scope: SchoolScope, school_id: int | None = None,
                         limit: Limit = 100, cursor: Cursor = None) -> PageOut[Guardian]:
    """Guardians in id order; a school's are those it registered or linked."""
    where = RecordFilter(school_id=pickup.scope.school_filter(scope, school_id))
    return paged(Guardian, await pickup.listing.guardians(where, limit=limit, cursor=cursor))


@router.patch("/guardians/{guardian_id}", response_model=Guardian)
async def update_guardian(guardian_id: int, body: GuardianChanges, pickup: PickupFace,
                          actor: Actor) -> Guardian:
    """Change a guardian's name, contact or CPF."""
    return Guardian.model_validate(await pickup.records.update_guardian(
        guardian_id=guardian_id, revision=body.revision, changes=body.changes("revision"),
        actor=actor))


@router.delete("/guardians/{guardian_id}", status_code=204)
async def delete_guardian(guardian_id: int, pickup: PickupFace, actor: Actor) -> Response:
    """Delete a guardian with no links (409 in-use otherwise); its tokens go with it."""
    await pickup.records.delete_guardian(guardian_id=guardian_id, actor=actor)
    return _gone()


@router.get("/guardians/{guardian_id}/tokens", response_model=PageOut[AccessToken])
async def list_tokens(guardian_id: int, pickup: PickupFace, limit: Limit = 100,
                      cursor: Cursor = None) -> PageOut[AccessToken]:
    """The guardian's tokens, oldest first (ids, kind — `app`, or `web` for a guardian page
    session — and dates; never the values)."""
    return paged(AccessToken, await pickup.access.tokens(guardian_id, limit=limit,
                                                         cursor=cursor))


@router.post("/guardians/{guardian_id}/tokens/{token_id}/revoke", status_code=204)
async def revoke_token(guardian_id: int, token_id: int, pickup: PickupFace,
                       actor: Actor) -> Response:
    """Revoke one app token: the guardian endpoints answer 401 to it from now on."""
    await pickup.access.revoke_token(guardian_id=guardian_id, token_id=token_id, actor=actor)
    return _gone()


@router.get("/links", response_model=PageOut[GuardianLink])
async def list_links(pickup: PickupFace, scope: SchoolScope, school_id: int | None = None,
                     student_id: int | None = None, guardian_id: int | None = None,
                     limit: Limit = 100, cursor: Cursor = None) -> PageOut[GuardianLink]:
    """Student–guardian links in id order."""
    where = RecordFilter(school_id=pickup.scope.school_filter(scope, school_id),
                         student_id=student_id, guardian_id=guardian_id)
    return paged(GuardianLink, await pickup.listing.links(where, limit=limit, cursor=cursor))


@router.patch("/links/{link_id}", response_model=GuardianLink)
async def update_link(link_id: int, body: LinkChanges, pickup: PickupFace,
                      actor: Actor) -> GuardianLink:
    """Change a link's kind or window (`StudentRosterChanged` for the guardian's app)."""
    return GuardianLink.model_validate(await pickup.records.update_link(
        link_id=link_id, revision=body.revision, changes=body.changes("revision"),
        actor=actor))


@router.delete("/links/{link_id}", status_code=204)
async def delete_link(link_id: int, pickup: PickupFace, actor: Actor) -> Response:
    """Unlink a guardian (`StudentRosterChanged`: the app drops the student)."""
    await pickup.records.delete_link(link_id=link_id, actor=actor)
    return _gone()


@router.get("/authorized-persons", response_model=PageOut[AuthorizedPerson])
async def list_persons(pickup: PickupFace, scope: SchoolScope, school_id: int | None = None,
                       student_id: int | None = None,
                       status: AuthorizationStatus | None = None, limit: Limit = 100,
                       cursor: Cursor = None) -> PageOut[AuthorizedPerson]:
    """Authorized persons in id order."""
    where = RecordFilter(school_id=pickup.scope.school_filter(scope, school_id),
                         student_id=student_id, status=status)
    return paged(AuthorizedPerson, await pickup.listing.persons(where, limit=limit,
                                                                cursor=cursor))


@router.patch("/authorized-persons/{person_id}", response_model=AuthorizedPerson)
async def edit_person(person_id: int, body: PersonChanges, pickup: PickupFace,
                      actor: Actor) -> AuthorizedPerson:
    """Edit a pending person, or one after request-adjustments (back to pending)."""
    return AuthorizedPerson.model_validate(await pickup.authorizations.edit_person(
        person_id=person_id, version=body.version, changes=body.changes("version"),
        actor=actor))


@router.delete("/authorized-persons/{person_id}", status_code=204)
async def delete_person(person_id: int, pickup: PickupFace, actor: Actor) -> Response:
    """Delete a person holding no badge (409 in-use while approved or revocation pending)."""
    await pickup.authorizations.delete_person(person_id=person_id, actor=actor)
    return _gone()

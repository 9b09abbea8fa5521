"""School scope: which school a record belongs to, for school-scoped API keys.

A record of another school answers 404, exactly as a missing one does, so a scoped key
learns nothing about other schools (not even that an id exists).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmodel import or_, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import PickupErrorCode
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.models import (
    AccessToken,
    AuthorizedPerson,
    EarlyRelease,
    Guardian,
    GuardianLink,
    LedgerEntry,
    Student,
)
from shared.db.engine import Sessions

# Path parameter -> (what it names, how to find that row's school).
_OWNERS = {
    "student_id": ("Student", lambda i: select(Student.school_id).where(Student.id == i)),
    "person_id": ("Authorized person", lambda i: select(Student.school_id).join(
        AuthorizedPerson, AuthorizedPerson.student_id == Student.id)
        .where(AuthorizedPerson.id == i)),
    "release_id": ("Early release", lambda i: select(Student.school_id).join(
        EarlyRelease, EarlyRelease.student_id == Student.id).where(EarlyRelease.id == i)),
    "link_id": ("Link", lambda i: select(Student.school_id).join(
        GuardianLink, GuardianLink.student_id == Student.id).where(GuardianLink.id == i)),
    "entry_id": ("Ledger entry", lambda i: select(LedgerEntry.controller)
                 .where(LedgerEntry.id == i)),
}


def guardian_in_school(school_id: int) -> Any:
    """Guardians a school sees: registered by it, or linked to one of its students."""
    linked = select(GuardianLink.guardian_id).join(
        Student, Student.id == GuardianLink.student_id).where(Student.school_id == school_id)
    return or_(Guardian.school_id == school_id, Guardian.id.in_(linked))


class SchoolScope:
    """What a school-scoped API key (`scope`: its school; None for the global key) reaches."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    @staticmethod
    def require_global(scope: int | None, what: str) -> None:
        """Refuse (403) an operation that spans schools to a school-scoped key."""
        if scope is not None:
            raise pickup_error(PickupErrorCode.SCHOOL_SCOPE,
                               f"{what} needs the global API key, not a school-scoped one.")

    @staticmethod
    def school_filter(scope: int | None, school_id: int | None) -> int | None:
        """The school a listing is limited to: the key's own (another school's is 404)."""
        if scope is None:
            return school_id
        if school_id is not None and school_id != scope:
            raise not_found("School", school_id)
        return scope

    @staticmethod
    def check_school(scope: int | None, school_id: int) -> None:
        """404 for a school other than the key's own."""
        if scope is not None and school_id != scope:
            raise not_found("School", school_id)

    async def check_path(self, scope: int | None, params: Mapping[str, str]) -> None:
        """404 unless every record named in the path belongs to the key's school."""
        if scope is None:
            return
        async with self._sessions() as session:
            for name, raw in params.items():
                await _check_one(session, scope, name, raw)

    async def check_student(self, scope: int | None, student_id: int) -> None:
        """404 for a student of another school (a body's `studentId`)."""
        await self.check_path(scope, {"student_id": str(student_id)})

    async def check_guardian(self, scope: int | None, guardian_id: int) -> None:
        """404 for a guardian the key's school does not see."""
        await self.check_path(scope, {"guardian_id": str(guardian_id)})


async def _check_one(session: AsyncSession, scope: int, name: str, raw: str) -> None:
    try:
        ident = int(raw)
    except ValueError:
        return  # not an id (a decision, an endpoint name): validation answers for it
    if name == "school_id":
        SchoolScope.check_school(scope, ident)
    elif name == "guardian_id":
        found = (await session.exec(select(Guardian.id).where(
            Guardian.id == ident, guardian_in_school(scope)))).first()
        if found is None:
            raise not_found("Guardian", ident)
    elif name == "token_id":
        guardian = (await session.exec(select(AccessToken.guardian_id)
                                       .where(AccessToken.id == ident))).first()
        if guardian is None:
            raise not_found("Token", ident)
        await _check_one(session, scope, "guardian_id", str(guardian))
    elif name in _OWNERS:
        what, query = _OWNERS[name]
        if (await session.exec(query(ident))).first() != scope:
            raise not_found(what, ident)
    else:
        # An id this guard does not know: refuse rather than guess whose it is.
        raise pickup_error(PickupErrorCode.SCHOOL_SCOPE,
                           f"`{name}` is not reachable with a school-scoped key.")

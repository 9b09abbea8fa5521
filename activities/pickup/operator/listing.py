"""Pages of pickup records (students, guardians, links, authorized persons) by school."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from sqlmodel import SQLModel, select

from activities.pickup.models import (
    AuthorizedPerson,
    EarlyRelease,
    Guardian,
    GuardianLink,
    Student,
)
from activities.pickup.operator.scope import guardian_in_school
from shared.db.engine import Sessions
from shared.paging import Page, after, bounded, page_of

Row = TypeVar("Row", bound=SQLModel)


@dataclass(frozen=True)
class RecordFilter:
    """What a listing is limited to; None means any."""

    school_id: int | None = None
    student_id: int | None = None
    guardian_id: int | None = None
    status: str | None = None


async def id_page(sessions: Sessions, model: type[Row], query: Any, *, limit: int,
                  cursor: str | None, descending: bool = False) -> Page[Row]:
    """`query` in id order (newest first if `descending`), the page after `cursor`: keyset
    on the primary key, so page N costs what page 1 does."""
    limit = bounded(limit)
    query = after(query, [model.id], cursor, kinds=[int], descending=descending)
    query = query.limit(limit + 1)
    async with sessions() as session:
        rows = list((await session.exec(query)).all())
    return page_of(rows, limit, lambda row: (row.id,))


class RecordListing:
    """The records of a school (or every school), a page at a time in id order."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def students(self, where: RecordFilter, *, limit: int = 100,
                       cursor: str | None = None) -> Page[Student]:
        """Students in id order."""
        query = select(Student)
        if where.school_id is not None:
            query = query.where(Student.school_id == where.school_id)
        if where.status is not None:
            query = query.where(Student.state == where.status)
        return await id_page(self._sessions, Student, query, limit=limit, cursor=cursor)

    async def guardians(self, where: RecordFilter, *, limit: int = 100,
                        cursor: str | None = None) -> Page[Guardian]:
        """Guardians in id order; a school sees those it registered or linked."""
        query = select(Guardian)
        if where.school_id is not None:
            query = query.where(guardian_in_school(where.school_id))
        return await id_page(self._sessions, Guardian, query, limit=limit, cursor=cursor)

    async def links(self, where: RecordFilter, *, limit: int = 100,
                    cursor: str | None = None) -> Page[GuardianLink]:
        """Student–guardian links in id order."""
        query = select(GuardianLink)
        if where.school_id is not None:
            query = query.join(Student, Student.id == GuardianLink.student_id).where(
                Student.school_id == where.school_id)
        if where.student_id is not None:
            query = query.where(GuardianLink.student_id == where.student_id)
        if where.guardian_id is not None:
            query = query.where(GuardianLink.guardian_id == where.guardian_id)
        return await id_page(self._sessions, GuardianLink, query, limit=limit, cursor=cursor)

    async def persons(self, where: RecordFilter, *, limit: int = 100,
                      cursor: str | None = None) -> Page[AuthorizedPerson]:
        """Authorized persons in id order."""
        query = select(AuthorizedPerson)
        if where.school_id is not None:
            query = query.join(Student, Student.id == AuthorizedPerson.student_id).where(
                Student.school_id == where.school_id)
        if where.student_id is not None:
            query = query.where(AuthorizedPerson.student_id == where.student_id)
        if where.status is not None:
            query = query.where(AuthorizedPerson.status == where.status)
        return await id_page(self._sessions, AuthorizedPerson, query, limit=limit,
                             cursor=cursor)

    async def releases(self, where: RecordFilter, *, limit: int = 100,
                       cursor: str | None = None) -> Page[EarlyRelease]:
        """Early releases in id order."""
        query = select(EarlyRelease)
        if where.school_id is not None:
            query = query.join(Student, Student.id == EarlyRelease.student_id).where(
                Student.school_id == where.school_id)
        if where.student_id is not None:
            query = query.where(EarlyRelease.student_id == where.student_id)
        if where.status is not None:
            query = query.where(EarlyRelease.status == where.status)
        return await id_page(self._sessions, EarlyRelease, query, limit=limit, cursor=cursor)

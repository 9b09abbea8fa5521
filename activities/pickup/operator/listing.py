"""Pages of pickup records (students, guardians, links, authorized persons) by school."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.models import AuthorizedPerson, Guardian, GuardianLink, Student
from activities.pickup.operator.scope import guardian_in_school

Sessions = async_sessionmaker[AsyncSession]
MAX_PAGE = 500


@dataclass(frozen=True)
class RecordFilter:
    """What a listing is limited to; None means any."""

    school_id: int | None = None
    student_id: int | None = None
    guardian_id: int | None = None
    status: str | None = None


@dataclass
class Page:
    """One page in id order, and the cursor of the next one (None on the last)."""

    items: list = field(default_factory=list)
    next_cursor: str | None = None


async def _page(sessions: Sessions, model: type, query, *, limit: int,
                cursor: int | None) -> Page:
    # Keyset on the primary key, like the signer's job list: page N costs what page 1 does.
    limit = max(1, min(limit, MAX_PAGE))
    if cursor is not None:
        query = query.where(model.id > cursor)
    query = query.order_by(model.id).limit(limit + 1)
    async with sessions() as session:
        rows = list((await session.exec(query)).all())
    more = len(rows) > limit
    return Page(rows[:limit], str(rows[limit - 1].id) if more else None)


async def list_students(sessions: Sessions, where: RecordFilter, *, limit: int = 100,
                        cursor: int | None = None) -> Page:
    """Students in id order."""
    query = select(Student)
    if where.school_id is not None:
        query = query.where(Student.school_id == where.school_id)
    if where.status is not None:
        query = query.where(Student.state == where.status)
    return await _page(sessions, Student, query, limit=limit, cursor=cursor)


async def list_guardians(sessions: Sessions, where: RecordFilter, *, limit: int = 100,
                         cursor: int | None = None) -> Page:
    """Guardians in id order; a school sees those it registered or linked."""
    query = select(Guardian)
    if where.school_id is not None:
        query = query.where(guardian_in_school(where.school_id))
    return await _page(sessions, Guardian, query, limit=limit, cursor=cursor)


async def list_links(sessions: Sessions, where: RecordFilter, *, limit: int = 100,
                     cursor: int | None = None) -> Page:
    """Student–guardian links in id order."""
    query = select(GuardianLink)
    if where.school_id is not None:
        query = query.join(Student, Student.id == GuardianLink.student_id).where(
            Student.school_id == where.school_id)
    if where.student_id is not None:
        query = query.where(GuardianLink.student_id == where.student_id)
    if where.guardian_id is not None:
        query = query.where(GuardianLink.guardian_id == where.guardian_id)
    return await _page(sessions, GuardianLink, query, limit=limit, cursor=cursor)


async def list_persons(sessions: Sessions, where: RecordFilter, *, limit: int = 100,
                       cursor: int | None = None) -> Page:
    """Authorized persons in id order."""
    query = select(AuthorizedPerson)
    if where.school_id is not None:
        query = query.join(Student, Student.id == AuthorizedPerson.student_id).where(
            Student.school_id == where.school_id)
    if where.student_id is not None:
        query = query.where(AuthorizedPerson.student_id == where.student_id)
    if where.status is not None:
        query = query.where(AuthorizedPerson.status == where.status)
    return await _page(sessions, AuthorizedPerson, query, limit=limit, cursor=cursor)

"""The broadcast table read as feeds: a school board's, or one guardian's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy import func, or_
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import and_, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import access
from shared.db.models import utcnow
from shared.db.pickup_models import BoardEvent

Sessions = async_sessionmaker[AsyncSession]
# Which events a feed shows, evaluated again on each poll (a guardian's students change).
Filter = Callable[[], Awaitable[object]]


async def newest_event_id(sessions: Sessions) -> int:
    """The id of the newest event (0 when there is none)."""
    async with sessions() as session:
        return (await session.exec(select(func.max(BoardEvent.id)))).one() or 0


async def events_after(sessions: Sessions, last_id: int, where: Filter,
                       limit: int) -> list[BoardEvent]:
    """Events of a feed after `last_id`, oldest first."""
    async with sessions() as session:
        return list((await session.exec(select(BoardEvent).where(
            BoardEvent.id > last_id, await where()).order_by(BoardEvent.id).limit(limit))).all())


def school_feed(school_id: int) -> Filter:
    """The school board's feed: `StudentStateChanged` and `StudentRosterChanged`."""

    async def where() -> object:
        return BoardEvent.school_id == school_id

    return where


def guardian_feed(sessions: Sessions, guardian_id: int) -> Filter:
    """A guardian's feed: their students' state changes and their own roster changes."""

    async def where() -> object:
        async with sessions() as session:
            students = [s.id for s in await access.linked_students(session, guardian_id,
                                                                   utcnow())]
        return or_(BoardEvent.guardian_id == guardian_id,
                   and_(BoardEvent.guardian_id.is_(None), BoardEvent.student_id.in_(students)))

    return where

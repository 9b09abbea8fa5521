"""The broadcast table read as feeds, in commit order: a school board's, or one guardian's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import func, or_
from sqlmodel import and_, select

from activities.pickup import access
from activities.pickup.models import BoardEvent, GuardianLink
from activities.pickup.records import valid_link
from shared.db.engine import Sessions
from shared.db.models import utcnow

# Which events a feed shows, evaluated again on each read (a guardian's students change).
Filter = Callable[[], Awaitable[object]]
# A feed's identity for the live fan-out: ("school", id) or ("guardian", id).
FeedKey = tuple[str, int]


@dataclass(frozen=True)
class Feed:
    """Which events a stream shows: a key for the live fan-out, a filter for replay."""

    key: FeedKey
    where: Filter


class BoardFeeds:
    """The broadcast table (`StudentStateChanged`, `StudentRosterChanged`) in commit order."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def newest_event_id(self) -> int:
        """The position of the newest committed event (0 when there is none)."""
        async with self._sessions() as session:
            return (await session.exec(select(func.max(BoardEvent.seq)))).one() or 0

    async def events_after(self, after: int, where: Filter | None, limit: int,
                           upto: int | None = None) -> list[BoardEvent]:
        """Events (of a feed, or all of them) with `after < seq <= upto`, in commit order."""
        # Ordered by `seq`, never by `id`: ids are taken at INSERT and commit out of order on
        # PostgreSQL; `seq` is taken at COMMIT (migration pickup_0005).
        query = select(BoardEvent).where(BoardEvent.seq > after)
        if upto is not None:
            query = query.where(BoardEvent.seq <= upto)
        if where is not None:
            query = query.where(await where())
        async with self._sessions() as session:
            return list((await session.exec(query.order_by(BoardEvent.seq).limit(limit))).all())

    async def guardians_of(self, student_ids: Iterable[int]) -> dict[int, set[int]]:
        """For each student, the guardians whose link is valid now (one query for all)."""
        wanted = sorted(set(student_ids))
        found: dict[int, set[int]] = {}
        if not wanted:
            return found
        async with self._sessions() as session:
            rows = await session.exec(select(GuardianLink.student_id, GuardianLink.guardian_id)
                                      .where(GuardianLink.student_id.in_(wanted),
                                             valid_link(utcnow())))
            for student_id, guardian_id in rows.all():
                found.setdefault(student_id, set()).add(guardian_id)
        return found

    @staticmethod
    def audience(event: BoardEvent, guardians: Mapping[int, set[int]]) -> set[FeedKey]:
        """The feeds an event belongs to: the same rule as `school_feed` and
        `guardian_feed`."""
        keys = {("school", event.school_id)}
        if event.guardian_id is not None:
            keys.add(("guardian", event.guardian_id))
        else:
            keys.update(("guardian", g) for g in guardians.get(event.student_id, ()))
        return keys

    @staticmethod
    def school_feed(school_id: int) -> Feed:
        """The school board's feed: `StudentStateChanged` and `StudentRosterChanged`."""

        async def where() -> object:
            return BoardEvent.school_id == school_id

        return Feed(("school", school_id), where)

    def guardian_feed(self, guardian_id: int) -> Feed:
        """A guardian's feed: their students' state changes and their own roster changes."""
        sessions = self._sessions

        async def where() -> object:
            async with sessions() as session:
                students = [s.id for s in await access.linked_students(session, guardian_id,
                                                                       utcnow())]
            return or_(BoardEvent.guardian_id == guardian_id,
                       and_(BoardEvent.guardian_id.is_(None),
                            BoardEvent.student_id.in_(students)))

        return Feed(("guardian", guardian_id), where)

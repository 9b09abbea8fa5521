"""Guardians' access as a door asks for it: bearer auth, their students, "Estou chegando",
links, and their app tokens (issued, listed, revoked)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import delete, select

from activities.pickup import access
from activities.pickup import board as machine
from activities.pickup.contracts.board import Kind, PickupErrorCode
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.guardian_access import sync_guardian
from activities.pickup.kick import Kicker
from activities.pickup.models import AccessToken, Guardian, GuardianLink, Student
from activities.pickup.operator.listing import id_page
from activities.pickup.records import audit, valid_link
from shared.db.engine import Sessions
from shared.db.models import utcnow
from shared.paging import Page
from shared.settings import PickupSettings


class GuardianAccess:
    """What a guardian may do and see, and the links and tokens that say so."""

    def __init__(self, sessions: Sessions, kicker: Kicker, settings: PickupSettings) -> None:
        self._sessions = sessions
        self._kicker = kicker
        self._settings = settings

    async def guardian_for_header(self, authorization: str | None) -> int:
        """The guardian of an `Authorization: Bearer <token>` header; refused without a live
        one."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise pickup_error(PickupErrorCode.TOKEN_MISSING,
                               "An `Authorization: Bearer <access token>` header is required.")
        async with self._sessions() as session:
            return await access.guardian_for_token(session, token.strip(), utcnow())

    async def linked_students(self, guardian_id: int, *, limit: int = 100,
                              cursor: str | None = None) -> Page[Student]:
        """Students the guardian may pick up now (expired temporary links excluded), in id
        order."""
        query = (select(Student).join(GuardianLink, GuardianLink.student_id == Student.id)
                 .where(GuardianLink.guardian_id == guardian_id, valid_link(utcnow())))
        return await id_page(self._sessions, Student, query, limit=limit, cursor=cursor)

    async def signal_arrivals(self, *, guardian_id: int, student_ids: list[int]
                              ) -> list[Student]:
        """"Estou chegando" for some students, all or none: refused for any not linked now."""
        now = utcnow()
        timers, students, notes = [], [], 0
        async with self._sessions() as session, session.begin():
            for student_id in student_ids:
                await access.require_link(session, guardian_id, student_id, now)
            for student_id in student_ids:
                change = await machine.signal_arrival(session, student_id=student_id,
                                                      guardian_id=guardian_id, at=now,
                                                      actor=f"guardian:{guardian_id}")
                timers += change.timers
                notes += change.notifications
                students.append(change.student)
        await self._kicker.after(timers=timers, notifications=notes)
        return students

    async def link_guardian(self, *, student_id: int, guardian_id: int, kind: Kind,
                            valid_from: datetime | None, valid_until: datetime | None,
                            actor: str) -> GuardianLink:
        """Link a guardian to a student (`StudentRosterChanged` for the guardian's app); a
        credential they hold at the student's school is granted on its turnstile."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            link = await access.create_link(session, student_id=student_id,
                                            guardian_id=guardian_id, kind=kind,
                                            valid_from=valid_from, valid_until=valid_until,
                                            at=now, actor=actor)
            school_id = (await session.get(Student, student_id)).school_id
            synced = await sync_guardian(session, guardian_id=guardian_id, school_id=school_id,
                                         at=now)
        if synced:
            await self._kicker.drains({school_id})
        return link

    async def issue_token(self, *, guardian_id: int, ttl_hours: float | None = None
                          ) -> tuple[str, AccessToken]:
        """A guardian-app token living `ttl_hours` (`…__TOKEN_TTL_HOURS` by default); the raw
        value is returned once and never stored."""
        ttl = timedelta(hours=ttl_hours or self._settings.token_ttl_hours)
        async with self._sessions() as session, session.begin():
            return await access.issue_token(session, guardian_id=guardian_id, ttl=ttl,
                                            at=utcnow())

    async def tokens(self, guardian_id: int, *, limit: int = 100,
                     cursor: str | None = None) -> Page[AccessToken]:
        """The guardian's tokens, oldest first (ids and dates; the hash stays in the store)."""
        async with self._sessions() as session:
            if await session.get(Guardian, guardian_id) is None:
                raise not_found("Guardian", guardian_id)
        query = select(AccessToken).where(AccessToken.guardian_id == guardian_id)
        return await id_page(self._sessions, AccessToken, query, limit=limit, cursor=cursor)

    async def revoke_token(self, *, guardian_id: int, token_id: int, actor: str) -> None:
        """Revoke one token: its row goes, so the app's next call gets 401 token-invalid."""
        async with self._sessions() as session, session.begin():
            token = await session.get(AccessToken, token_id)
            if token is None or token.guardian_id != guardian_id:
                raise not_found("Token", token_id)
            guardian = await session.get(Guardian, guardian_id)
            await session.exec(delete(AccessToken).where(AccessToken.id == token_id))
            audit(session, entity="access_token", entity_id=token_id, action="revoked",
                  actor=actor, at=utcnow(), school_id=guardian.school_id,
                  guardian_id=guardian_id)

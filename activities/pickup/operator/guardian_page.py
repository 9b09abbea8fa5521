"""The guardian page as its door asks for it: sign-in links, page sessions, what a signed-in
guardian sees (their students on valid links, the notifications sent to them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import access
from activities.pickup import guardian_sign_in as sign_in
from activities.pickup.contracts.board import TokenKind
from activities.pickup.errors import not_found
from activities.pickup.models import Guardian, Notification, School, Student
from activities.pickup.sign_in_sender import (
    LINK_PATH,
    SignInMessage,
    SignInSender,
    page_base_url,
)
from shared.db.engine import Sessions
from shared.db.models import utcnow
from shared.settings import Settings

# The newest notifications the page lists.
NOTIFICATIONS_SHOWN = 20


@dataclass(frozen=True)
class LinkRequest:
    """What asking for a link did: throttled (seconds to wait), or these messages to send
    (none when nobody matched: the asker is told the same either way)."""

    retry_after: float | None
    messages: list[SignInMessage] = field(default_factory=list)


@dataclass(frozen=True)
class GuardianView:
    """What the page shows a signed-in guardian: each student and each notification with
    the time zone of the student's school."""

    guardian: Guardian
    students: list[tuple[Student, str]]
    notifications: list[tuple[Notification, str]]


@dataclass(frozen=True)
class PageSession:
    """A page session just opened: the raw cookie value (shown this once) and its end."""

    cookie: str
    expires_at: datetime


class GuardianPage:
    """The guardian page's sign-in and view; its links leave through the process's one
    sender (the notification webhook, signed)."""

    def __init__(self, sessions: Sessions, settings: Settings,
                 sender: SignInSender | None = None) -> None:
        self._sessions = sessions
        self._settings = settings
        self._sender = sender or SignInSender(settings)

    @property
    def link_minutes(self) -> int:
        """How long a sign-in link lives, in whole minutes (`…__SIGN_IN_LINK_MINUTES`)."""
        return round(self._settings.pickup.sign_in_link_minutes)

    async def request_link(self, *, identity: str, address: str | None) -> LinkRequest:
        """Count the request (identity hash and client address), then issue a link to each
        guardian the identity names."""
        pickup, now = self._settings.pickup, utcnow()
        window = timedelta(minutes=pickup.sign_in_link_minutes)
        named = sign_in.read_identity(identity)
        limits = {f"ip:{address or 'unknown'}"[:80]: pickup.sign_in_link_max_per_address}
        if named is not None:
            limits[named.key] = pickup.sign_in_link_max_requests
        async with self._sessions() as session, session.begin():
            wait = await sign_in.over_limit(session, limits, now=now, window=window)
            if wait is not None or named is None:
                return LinkRequest(wait)
            messages = []
            for guardian in await sign_in.guardians_named(session, named):
                raw, link = await sign_in.issue_link(session, guardian, now=now, ttl=window)
                messages.append(SignInMessage(
                    guardian_id=guardian.id, link_id=link.id, expires_at=link.expires_at,
                    link=f"{page_base_url(self._settings)}{LINK_PATH}?token={raw}",
                    minutes=self.link_minutes))
        return LinkRequest(None, messages)

    async def send_links(self, messages: list[SignInMessage]) -> None:
        """Post the links (a failure is logged and counted, never raised)."""
        await self._sender.send_all(messages)

    async def link_usable(self, raw: str) -> bool:
        """Whether the link would still sign in (nothing spent)."""
        async with self._sessions() as session:
            return await sign_in.link_usable(session, raw, utcnow())

    async def use_link(self, raw: str) -> PageSession:
        """Spend the link for a page session (`…__TOKEN_TTL_HOURS`)."""
        ttl = timedelta(hours=self._settings.pickup.token_ttl_hours)
        async with self._sessions() as session, session.begin():
            cookie, token = await sign_in.use_link(session, raw, now=utcnow(), session_ttl=ttl)
        return PageSession(cookie, token.expires_at)

    async def guardian_of_session(self, raw: str) -> int:
        """The guardian a live page session belongs to (401 token-invalid otherwise)."""
        async with self._sessions() as session:
            return await access.guardian_for_token(session, raw, utcnow(), kind=TokenKind.WEB)

    async def sign_out(self, raw: str) -> None:
        """End the page session for good."""
        async with self._sessions() as session, session.begin():
            await sign_in.end_session(session, raw, now=utcnow())

    async def view(self, guardian_id: int) -> GuardianView:
        """The guardian, their students on links valid now, and the newest notifications
        about those students (a student whose link ended is gone from both)."""
        async with self._sessions() as session:
            guardian = await session.get(Guardian, guardian_id)
            if guardian is None:
                raise not_found("Guardian", guardian_id)
            students = await access.linked_students(session, guardian_id, utcnow())
            zones = await _zones(session, {s.school_id for s in students})
            zone_of = {s.id: zones[s.school_id] for s in students}
            notes = (await session.exec(select(Notification).where(
                Notification.guardian_id == guardian_id,
                Notification.student_id.in_(list(zone_of)))
                .order_by(Notification.id.desc()).limit(NOTIFICATIONS_SHOWN))).all()
        return GuardianView(guardian, [(s, zones[s.school_id]) for s in students],
                            [(n, zone_of[n.student_id]) for n in notes])

    async def linked_student(self, guardian_id: int, student_id: int) -> tuple[Student, str]:
        """One student the guardian may pick up now, with its school's zone; 404 otherwise
        (the same answer as a student that does not exist)."""
        async with self._sessions() as session:
            for student in await access.linked_students(session, guardian_id, utcnow()):
                if student.id == student_id:
                    zones = await _zones(session, {student.school_id})
                    return student, zones[student.school_id]
        raise not_found("Student", student_id)


async def _zones(session: AsyncSession, school_ids: set[int]) -> dict[int, str]:
    if not school_ids:
        return {}
    rows = await session.exec(select(School.id, School.time_zone).where(
        School.id.in_(sorted(school_ids))))
    return dict(rows.all())

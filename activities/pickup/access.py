"""Guardians' access: links (permanent or temporary), app tokens, and their hygiene sweeps."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import delete, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import EventType, Kind, PickupErrorCode, TokenKind
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.models import (
    AccessToken,
    AuditEntry,
    BoardEvent,
    Guardian,
    GuardianLink,
    Student,
)
from activities.pickup.records import audit, broadcast_roster, bulk_insert, valid_link
from shared.db.models import as_utc

L = GuardianLink


def hash_token(raw: str) -> str:
    """Tokens are stored as their SHA-256 only."""
    return hashlib.sha256(raw.encode()).hexdigest()


async def issue_token(session: AsyncSession, *, guardian_id: int, ttl: timedelta,
                      at: datetime, kind: TokenKind = TokenKind.APP
                      ) -> tuple[str, AccessToken]:
    """A new guardian token (the app's, or the guardian page's session); the raw value is
    returned once and never stored."""
    if await session.get(Guardian, guardian_id) is None:
        raise not_found("Guardian", guardian_id)
    raw = secrets.token_urlsafe(32)
    token = AccessToken(guardian_id=guardian_id, token_hash=hash_token(raw),
                        expires_at=at + ttl, created_at=at, kind=kind)
    session.add(token)
    return raw, token


async def guardian_for_token(session: AsyncSession, raw: str, now: datetime,
                             kind: TokenKind = TokenKind.APP) -> int:
    """The guardian a live token of `kind` belongs to; an unknown or expired token, or one
    of the other kind (a page cookie is no bearer token, nor the reverse), is refused."""
    token = (await session.exec(select(AccessToken).where(
        AccessToken.token_hash == hash_token(raw), AccessToken.kind == kind))).first()
    if token is None or as_utc(token.expires_at) <= now:
        raise pickup_error(PickupErrorCode.TOKEN_INVALID, "The access token is not valid.")
    return token.guardian_id


async def linked_students(session: AsyncSession, guardian_id: int, now: datetime
                          ) -> list[Student]:
    """Students the guardian may pick up now (an expired temporary link no longer counts)."""
    rows = await session.exec(
        select(Student).join(L, L.student_id == Student.id)
        .where(L.guardian_id == guardian_id, valid_link(now)).order_by(Student.id))
    return list(rows.all())


async def require_link(session: AsyncSession, guardian_id: int, student_id: int,
                       now: datetime) -> None:
    """Deny unless a valid link exists at `now` (before any sweep removes an expired one)."""
    found = (await session.exec(select(L.id).where(
        L.guardian_id == guardian_id, L.student_id == student_id, valid_link(now)))).first()
    if found is None:
        raise pickup_error(PickupErrorCode.ACCESS_DENIED,
                           f"Guardian {guardian_id} may not act for student {student_id}.")


async def create_link(session: AsyncSession, *, student_id: int, guardian_id: int, kind: Kind,
                      valid_from: datetime | None, valid_until: datetime | None, at: datetime,
                      actor: str) -> GuardianLink:
    """Link a guardian; permanent links carry no dates, temporary ones must end."""
    if kind == Kind.PERMANENT and (valid_from or valid_until):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY, "A permanent link has no dates.")
    if kind == Kind.TEMPORARY and (
            valid_until is None or (valid_from is not None and valid_from >= valid_until)):
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY,
                           "A temporary link needs valid_until after valid_from.")
    student = await session.get(Student, student_id)
    if student is None:
        raise not_found("Student", student_id)
    if await session.get(Guardian, guardian_id) is None:
        raise not_found("Guardian", guardian_id)
    if (await session.exec(select(GuardianLink.id).where(
            GuardianLink.student_id == student_id,
            GuardianLink.guardian_id == guardian_id))).first() is not None:
        raise pickup_error(PickupErrorCode.STATUS_CONFLICT,
                           f"Guardian {guardian_id} is already linked to student {student_id}.")
    link = GuardianLink(student_id=student_id, guardian_id=guardian_id, kind=kind,
                        valid_from=valid_from, valid_until=valid_until, created_at=at)
    session.add(link)
    await session.flush()
    broadcast_roster(session, school_id=student.school_id, student_id=student_id,
                     guardian_id=guardian_id, at=at, reason="link-added", link_id=link.id)
    audit(session, entity="guardian_link", entity_id=link.id, action="created", actor=actor,
          at=at, school_id=student.school_id, to_state=kind, guardian_id=guardian_id)
    return link


@dataclass
class Deleted:
    """What one cleanup batch removed."""

    examined: int = 0
    changed: int = 0


async def delete_expired_links(session: AsyncSession, *, now: datetime, at: datetime,
                               actor: str, limit: int) -> Deleted:
    """Physically delete temporary links past `valid_until`; one `StudentRosterChanged` each.

    Permanent links are never selected (and the DELETE itself repeats the condition).
    """
    rows = (await session.exec(
        select(L.id, L.student_id, L.guardian_id, Student.school_id)
        .join(Student, Student.id == L.student_id)
        .where(L.kind == Kind.TEMPORARY, L.valid_until <= now).limit(limit)
    )).all()
    if not rows:
        return Deleted()
    by_id = {row[0]: row for row in rows}
    result = await session.exec(
        delete(L).where(L.id.in_(list(by_id)), L.kind == Kind.TEMPORARY, L.valid_until <= now)
        .returning(L.id))
    gone = sorted(result.scalars().all())
    events, audits = [], []
    for link_id in gone:
        _, student_id, guardian_id, school_id = by_id[link_id]
        events.append({"at": at, "type": EventType.STUDENT_ROSTER_CHANGED, "school_id": school_id,
                       "student_id": student_id, "guardian_id": guardian_id,
                       "reason": "link-expired",
                       "payload": {"student_id": student_id, "guardian_id": guardian_id,
                                   "link_id": link_id, "change": "link-expired"}})
        audits.append({"at": at, "school_id": school_id, "entity": "guardian_link",
                       "entity_id": link_id, "action": "deleted", "from_state": Kind.TEMPORARY,
                       "to_state": None, "reason": "validade vencida", "actor": actor,
                       "details": {"student_id": student_id, "guardian_id": guardian_id}})
    if gone:
        await bulk_insert(session, BoardEvent, events)
        await bulk_insert(session, AuditEntry, audits)
    return Deleted(examined=len(rows), changed=len(gone))


async def prune_tokens(session: AsyncSession, *, cutoff: datetime, limit: int) -> Deleted:
    """Delete tokens that expired before `cutoff` (24 h ago by default): data hygiene only."""
    ids = (await session.exec(select(AccessToken.id).where(AccessToken.expires_at <= cutoff)
                              .limit(limit))).all()
    if not ids:
        return Deleted()
    result = await session.exec(delete(AccessToken).where(AccessToken.id.in_(list(ids)),
                                                          AccessToken.expires_at <= cutoff))
    return Deleted(examined=len(ids), changed=result.rowcount)

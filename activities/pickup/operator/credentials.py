"""Setting a student's, guardian's or authorized person's card / QR code, as a door asks.

A credential already on the turnstile (an approved person's, a linked guardian's, a READY
student's exit credential) is swapped there too: the old value is revoked and the new one
granted, through the ledger, in the same transaction.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from uuid import uuid4

from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import (
    AuthorizationStatus,
    LedgerCommand,
    PickupState,
    SubjectKind,
    SyncStatus,
)
from activities.pickup.credentials import attach, put_credential
from activities.pickup.errors import not_found
from activities.pickup.exit_grant import swap_exit
from activities.pickup.guardian_access import lock_guardian, sync_guardian
from activities.pickup.kick import Kicker
from activities.pickup.models import AuthorizedPerson, Credential, Student
from activities.pickup.records import audit, enqueue_ledger, person_registration
from shared.db.engine import Sessions
from shared.db.models import as_utc, utcnow


class PickupCredentials:
    """The card / QR code of a student, a guardian or an authorized person."""

    def __init__(self, sessions: Sessions, kicker: Kicker, ready_timeout: timedelta) -> None:
        self._sessions = sessions
        self._kicker = kicker
        self._ready_timeout = ready_timeout

    async def set_person_credential(self, *, person_id: int, card_value: int | None,
                                    qr_value: str | None, actor: str) -> Credential:
        """The person's card / QR code at the student's school (409 if someone else's
        there)."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            person = await session.get(AuthorizedPerson, person_id)
            if person is None:
                raise not_found("Authorized person", person_id)
            student = await session.get(Student, person.student_id)
            credential, previous = await put_credential(
                session, school_id=student.school_id,
                holder_kind=SubjectKind.AUTHORIZED_PERSON, holder_id=person_id,
                card_value=card_value, qr_value=qr_value, at=now)
            swapped = person.status == AuthorizationStatus.APPROVED and _changed(credential,
                                                                                 previous)
            if swapped:
                _swap_on_turnstile(session, person, student.school_id, previous, credential,
                                   now)
            audit(session, entity="authorized_person", entity_id=person_id,
                  action="credential-set", actor=actor, at=now, school_id=student.school_id,
                  on_turnstile=swapped)
        if swapped:
            await self._kicker.drains({student.school_id})
        return credential

    async def set_student_credential(self, *, student_id: int, card_value: int | None,
                                     qr_value: str | None, actor: str) -> Credential:
        """The student's own card / QR code at its school (409 if someone else's there): the
        credential its READY exit grant carries; a READY student's is swapped on the
        device."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            student = await session.get(Student, student_id)
            if student is None:
                raise not_found("Student", student_id)
            credential, previous = await put_credential(
                session, school_id=student.school_id, holder_kind=SubjectKind.STUDENT,
                holder_id=student_id, card_value=card_value, qr_value=qr_value, at=now)
            swapped = student.state == PickupState.READY and _changed(credential, previous)
            if swapped:
                await swap_exit(session, student, credential, now, self._ready_timeout)
            audit(session, entity="student", entity_id=student_id, action="credential-set",
                  actor=actor, at=now, school_id=student.school_id, on_turnstile=swapped)
        if swapped:
            await self._kicker.drains({student.school_id})
        return credential

    async def set_guardian_credential(self, *, guardian_id: int, school_id: int,
                                      card_value: int | None, qr_value: str | None,
                                      actor: str) -> Credential:
        """The guardian's card / QR code at a school (409 if someone else's there); granted
        on that school's turnstile while a link to one of its students lasts."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            if await lock_guardian(session, guardian_id) is None:
                raise not_found("Guardian", guardian_id)
            credential = await attach(session, school_id=school_id,
                                      holder_kind=SubjectKind.GUARDIAN, holder_id=guardian_id,
                                      card_value=card_value, qr_value=qr_value, at=now)
            synced = await sync_guardian(session, guardian_id=guardian_id,
                                         school_id=school_id, at=now)
            audit(session, entity="guardian", entity_id=guardian_id, action="credential-set",
                  actor=actor, at=now, school_id=school_id, on_turnstile=synced)
        if synced:
            await self._kicker.drains({school_id})
        return credential


def _changed(new: Credential, old: Credential | None) -> bool:
    return old is None or (old.card_value, old.qr_value) != (new.card_value, new.qr_value)


def _swap_on_turnstile(session: AsyncSession, person: AuthorizedPerson, school_id: int,
                       old: Credential | None, new: Credential, at: datetime) -> None:
    """Revoke exactly the values that went, then grant the new ones with the person's window."""
    change = uuid4().hex  # one key per swap: each swap is its own pair of commands
    common = {"controller": school_id, "subject_kind": SubjectKind.AUTHORIZED_PERSON,
              "subject_id": person.id, "registration": person_registration(person.id), "at": at}
    gone_card = old.card_value if old and old.card_value != new.card_value else None
    gone_qr = old.qr_value if old and old.qr_value != new.qr_value else None
    if gone_card is not None or gone_qr is not None:
        enqueue_ledger(session, command=LedgerCommand.REVOKE, card_value=gone_card,
                       qr_value=gone_qr, key=f"revoke:authorized:{person.id}:{change}",
                       **common)
    enqueue_ledger(session, command=LedgerCommand.GRANT, name=person.name,
                   begin_time=_epoch(person.valid_from), end_time=_epoch(person.valid_until),
                   card_value=new.card_value, qr_value=new.qr_value,
                   key=f"grant:authorized:{person.id}:{change}", **common)
    person.sync_status = SyncStatus.PENDING


def _epoch(moment: datetime | None) -> int:
    return int(as_utc(moment).timestamp()) if moment else 0

"""A guardian's credential on each school's turnstile, following their links there.

What the device holds is read back from the ledger (the guardian's last entry on that
controller); a change writes only the difference, so running it twice writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import uuid4

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import Kind, LedgerCommand, SubjectKind
from activities.pickup.credentials import credential_of
from activities.pickup.models import Credential, Guardian, GuardianLink, LedgerEntry, Student
from activities.pickup.records import enqueue_ledger, guardian_registration
from shared.db.models import as_utc

G = SubjectKind.GUARDIAN


@dataclass(frozen=True)
class Access:
    """One credential on one controller, with its window (epoch seconds, 0 = open)."""

    card_value: int | None
    qr_value: str | None
    begin_time: int
    end_time: int


async def lock_guardian(session: AsyncSession, guardian_id: int) -> Guardian | None:
    """The guardian row, locked: changes to one guardian's grants go one at a time, each
    reading what the previous one committed (take it before touching their credential)."""
    return (await session.exec(select(Guardian).where(Guardian.id == guardian_id)
                               .with_for_update())).first()


async def sync_guardian(session: AsyncSession, *, guardian_id: int, school_id: int,
                        at: datetime, gone: bool = False) -> bool:
    """Grant / revoke on the school's controller so it matches the credential and links;
    True when a ledger entry was written (the caller kicks that controller's drain)."""
    guardian = await lock_guardian(session, guardian_id)
    held = await _on_device(session, guardian_id, school_id)
    wanted = None if gone else await _wanted(session, guardian_id, school_id, at)
    if held == wanted:
        return False
    change = uuid4().hex  # each change is its own pair of commands
    common = {"controller": school_id, "subject_kind": G, "subject_id": guardian_id,
              "registration": guardian_registration(guardian_id), "at": at}
    gone_card = held.card_value if held and (
        wanted is None or held.card_value != wanted.card_value) else None
    gone_qr = held.qr_value if held and (
        wanted is None or held.qr_value != wanted.qr_value) else None
    if gone_card is not None or gone_qr is not None:
        enqueue_ledger(session, command=LedgerCommand.REVOKE, card_value=gone_card,
                       qr_value=gone_qr, key=f"revoke:guardian:{guardian_id}:{change}", **common)
    if wanted is not None:
        enqueue_ledger(session, command=LedgerCommand.GRANT, name=guardian.name,
                       begin_time=wanted.begin_time, end_time=wanted.end_time,
                       card_value=wanted.card_value, qr_value=wanted.qr_value,
                       key=f"grant:guardian:{guardian_id}:{change}", **common)
    return True


async def sync_guardian_everywhere(session: AsyncSession, *, guardian_id: int, at: datetime,
                                   gone: bool = False) -> set[int]:
    """`sync_guardian` at every school where they hold a credential or were granted;
    the controllers that got an entry."""
    schools = set((await session.exec(select(Credential.school_id).where(
        Credential.holder_kind == G, Credential.holder_id == guardian_id))).all())
    schools |= set((await session.exec(select(LedgerEntry.controller).where(
        LedgerEntry.subject_kind == G, LedgerEntry.subject_id == guardian_id))).all())
    return {school_id for school_id in sorted(schools)
            if await sync_guardian(session, guardian_id=guardian_id, school_id=school_id,
                                   at=at, gone=gone)}


async def _on_device(session: AsyncSession, guardian_id: int, school_id: int) -> Access | None:
    """What the ledger last asked the controller to hold (a revoke leaves nothing)."""
    last = (await session.exec(select(LedgerEntry).where(
        LedgerEntry.controller == school_id, LedgerEntry.subject_kind == G,
        LedgerEntry.subject_id == guardian_id).order_by(LedgerEntry.id.desc()))).first()
    if last is None or last.command != LedgerCommand.GRANT:
        return None
    return Access(last.card_value, last.qr_value, last.begin_time, last.end_time)


async def _wanted(session: AsyncSession, guardian_id: int, school_id: int,
                  at: datetime) -> Access | None:
    """The credential with the window its links to the school's students give, if any."""
    credential = await credential_of(session, school_id=school_id, holder_kind=G,
                                     holder_id=guardian_id)
    if credential is None or (credential.card_value is None and credential.qr_value is None):
        return None
    links = (await session.exec(select(GuardianLink).join(
        Student, Student.id == GuardianLink.student_id).where(
        GuardianLink.guardian_id == guardian_id, Student.school_id == school_id))).all()
    live = [link for link in links
            if link.kind == Kind.PERMANENT or as_utc(link.valid_until) > as_utc(at)]
    if not live:
        return None
    if any(link.kind == Kind.PERMANENT for link in live):
        begin = end = 0
    else:
        end = max(_epoch(link.valid_until) for link in live)
        starts = [link.valid_from for link in live]
        begin = 0 if None in starts else min(_epoch(start) for start in starts)
    return Access(credential.card_value, credential.qr_value, begin, end)


def _epoch(moment: datetime) -> int:
    return int(as_utc(moment).timestamp())

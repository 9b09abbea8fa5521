"""Authorized persons and early releases: decisions, and the expiry both sweeps apply."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import guardian_notices
from activities.pickup.contracts.board import (
    EXPIRABLE,
    AuthorizationStatus,
    Kind,
    LedgerCommand,
    LedgerStatus,
    PickupErrorCode,
    SubjectKind,
    SyncStatus,
)
from activities.pickup.credentials import credential_of
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.models import (
    AuditEntry,
    AuthorizedPerson,
    Credential,
    EarlyRelease,
    LedgerEntry,
    Student,
)
from activities.pickup.records import audit, bulk_insert, enqueue_ledger, person_registration
from shared.db.models import as_utc

A = AuthorizedPerson
# Which statuses each decision may start from.
DECISIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "approve": ((AuthorizationStatus.PENDING, AuthorizationStatus.ADJUSTMENTS_REQUESTED),
                AuthorizationStatus.APPROVED),
    "request-adjustments": ((AuthorizationStatus.PENDING,),
                            AuthorizationStatus.ADJUSTMENTS_REQUESTED),
    "revoke": (EXPIRABLE, AuthorizationStatus.REVOKED),
}


@dataclass
class Expired:
    """What one expiry batch changed."""

    examined: int = 0
    changed: int = 0
    ledger: int = 0
    controllers: set[int] = field(default_factory=set)


def _epoch(moment: datetime | None) -> int:
    return int(as_utc(moment).timestamp()) if moment else 0


async def decide_person(session: AsyncSession, *, person_id: int, decision: str,
                        version: int, at: datetime, actor: str) -> tuple[AuthorizedPerson, set]:
    """Approve / request adjustments / revoke, as a CAS on status and version."""
    person = await session.get(A, person_id)
    if person is None:
        raise not_found("Authorized person", person_id)
    sources, target = DECISIONS[decision]
    if person.status not in sources:
        raise pickup_error(PickupErrorCode.STATUS_CONFLICT,
                           f"Authorized person {person_id} is {person.status}.")
    if decision == "approve" and person.kind == Kind.TEMPORARY and as_utc(person.valid_until) <= at:
        raise pickup_error(PickupErrorCode.INVALID_VALIDITY,
                           f"Authorized person {person_id} expired at {person.valid_until}.")
    previous = person.status
    sends = decision == "approve" or previous == AuthorizationStatus.APPROVED
    values: dict[str, object] = {"status": target, "version": A.version + 1, "updated_at": at}
    if sends:
        values["sync_status"] = SyncStatus.PENDING
    result = await session.exec(update(A).where(A.id == person_id, A.status == previous,
                                                A.version == version).values(**values))
    if result.rowcount != 1:
        raise pickup_error(PickupErrorCode.VERSION_CONFLICT,
                           f"Authorized person {person_id} changed; reload it (version {version}).")
    person = await session.get(A, person_id, populate_existing=True)
    student = await session.get(Student, person.student_id)
    controllers: set[int] = set()
    if sends:
        command = LedgerCommand.GRANT if decision == "approve" else LedgerCommand.REVOKE
        held = await credential_of(session, school_id=student.school_id,
                                   holder_kind=SubjectKind.AUTHORIZED_PERSON, holder_id=person_id)
        enqueue_ledger(session, controller=student.school_id, command=command,
                       subject_kind=SubjectKind.AUTHORIZED_PERSON, subject_id=person_id,
                       registration=person_registration(person_id), name=person.name,
                       begin_time=_epoch(person.valid_from), end_time=_epoch(person.valid_until),
                       key=f"{command}:authorized:{person_id}:{decision}", at=at,
                       card_value=held.card_value if held else None,
                       qr_value=held.qr_value if held else None)
        controllers.add(student.school_id)
    audit(session, entity="authorized_person", entity_id=person_id, action=decision, actor=actor,
          at=at, school_id=student.school_id, from_state=previous, to_state=target)
    return person, controllers


async def expire_persons(session: AsyncSession, *, now: datetime, at: datetime, actor: str,
                         limit: int, ids: list[int] | None = None) -> Expired:
    """Temporary pending/approved/adjustments-requested persons past `valid_until` -> expired.

    Permanent persons are never selected. An approved one also gets an outbound revocation
    and `sync_status = pending` until the controller confirms.
    """
    query = (select(A.id, A.status, Student.school_id).join(Student, Student.id == A.student_id)
             .where(A.kind == Kind.TEMPORARY, A.status.in_(EXPIRABLE), A.valid_until <= now)
             .limit(limit))
    if ids is not None:
        query = query.where(A.id.in_(ids))
    rows = (await session.exec(query)).all()
    out = Expired(examined=len(rows))
    groups: dict[str, list[int]] = defaultdict(list)
    school = {}
    for person_id, status, school_id in rows:
        groups[status].append(person_id)
        school[person_id] = school_id
    audits, ledger = [], []
    for status, group in groups.items():
        values: dict[str, object] = {"status": AuthorizationStatus.EXPIRED,
                                     "version": A.version + 1, "updated_at": at}
        approved = status == AuthorizationStatus.APPROVED
        if approved:
            values["sync_status"] = SyncStatus.PENDING
        # Conditional on the status read above: a concurrent decision makes this row skip.
        result = await session.exec(
            update(A).where(A.id.in_(group), A.status == status, A.valid_until <= now)
            .values(**values).returning(A.id))
        for person_id in result.scalars().all():
            out.changed += 1
            audits.append(_audit_row(person_id, school[person_id], status, at, actor))
            if approved:
                ledger.append(_revoke_row(person_id, school[person_id], at))
                out.controllers.add(school[person_id])
    if audits:
        await bulk_insert(session, AuditEntry, audits)
    if ledger:
        await _with_credentials(session, ledger)
        await bulk_insert(session, LedgerEntry, ledger)
    out.ledger = len(ledger)
    return out


def _audit_row(entity_id: int, school_id: int, previous: str, at: datetime, actor: str,
               entity: str = "authorized_person") -> dict[str, object]:
    return {"at": at, "school_id": school_id, "entity": entity, "entity_id": entity_id,
            "action": "expired", "from_state": previous, "to_state": AuthorizationStatus.EXPIRED,
            "reason": "validade vencida", "actor": actor, "details": {}}


async def _with_credentials(session: AsyncSession, rows: list[dict[str, object]]) -> None:
    """Put each revoked person's credential on its ledger row (one query for the batch)."""
    held = {(c.school_id, c.holder_id): c for c in (await session.exec(select(Credential).where(
        Credential.holder_kind == SubjectKind.AUTHORIZED_PERSON,
        Credential.holder_id.in_([row["subject_id"] for row in rows])))).all()}
    for row in rows:
        credential = held.get((row["controller"], row["subject_id"]))
        row["card_value"] = credential.card_value if credential else None
        row["qr_value"] = credential.qr_value if credential else None


def _revoke_row(person_id: int, school_id: int, at: datetime) -> dict[str, object]:
    return {"controller": school_id, "command": LedgerCommand.REVOKE,
            "subject_kind": SubjectKind.AUTHORIZED_PERSON, "subject_id": person_id,
            "registration": person_registration(person_id), "name": "", "begin_time": 0,
            "end_time": 0, "status": LedgerStatus.PENDING, "attempts": 0,
            "idempotency_key": f"revoke:authorized:{person_id}:expired", "created_at": at}


async def expire_early_releases(session: AsyncSession, *, now: datetime, at: datetime,
                                actor: str, limit: int, ids: list[int] | None = None) -> Expired:
    """Unused early releases past their date -> expired; audit only (no device credential)."""
    E = EarlyRelease
    query = (select(E.id, E.status, Student.school_id).join(Student, Student.id == E.student_id)
             .where(E.status.in_(EXPIRABLE), E.valid_until <= now).limit(limit))
    if ids is not None:
        query = query.where(E.id.in_(ids))
    rows = (await session.exec(query)).all()
    out = Expired(examined=len(rows))
    school = {release_id: school_id for release_id, _, school_id in rows}
    groups: dict[str, list[int]] = defaultdict(list)
    for release_id, status, _ in rows:
        groups[status].append(release_id)
    audits = []
    for status, group in groups.items():
        result = await session.exec(
            update(E).where(E.id.in_(group), E.status == status, E.valid_until <= now)
            .values(status=AuthorizationStatus.EXPIRED, version=E.version + 1).returning(E.id))
        for release_id in result.scalars().all():
            out.changed += 1
            audits.append(_audit_row(release_id, school[release_id], status, at, actor,
                                     entity="early_release"))
    if audits:
        await bulk_insert(session, AuditEntry, audits)
    return out


async def decide_early_release(session: AsyncSession, *, release_id: int, decision: str,
                               version: int, at: datetime, actor: str) -> EarlyRelease:
    """approve / request-adjustments / use (single use: approved -> used, once)."""
    E = EarlyRelease
    release = await session.get(E, release_id)
    if release is None:
        raise not_found("Early release", release_id)
    if decision == "use":
        sources, target = (AuthorizationStatus.APPROVED,), AuthorizationStatus.USED
        if as_utc(release.valid_until) <= at:
            sources = ()
    else:
        sources, target = DECISIONS[decision][0][:2], DECISIONS[decision][1]
    if release.status not in sources:
        raise pickup_error(PickupErrorCode.STATUS_CONFLICT,
                           f"Early release {release_id} is {release.status}.")
    values: dict[str, object] = {"status": target, "version": E.version + 1}
    if decision == "use":
        values["used_at"] = at
    result = await session.exec(update(E).where(E.id == release_id, E.status == release.status,
                                                E.version == version).values(**values))
    if result.rowcount != 1:
        raise pickup_error(PickupErrorCode.VERSION_CONFLICT,
                           f"Early release {release_id} changed; reload it.")
    student = await session.get(Student, release.student_id)
    audit(session, entity="early_release", entity_id=release_id, action=decision, actor=actor,
          at=at, school_id=student.school_id, from_state=release.status, to_state=target)
    decided = await session.get(E, release_id, populate_existing=True)
    if decision == "approve":
        await guardian_notices.early_release_approved(session, decided, at)
    return decided

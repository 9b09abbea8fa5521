"""A school's roster from CSV: students (and their cards), guardians and links, checked whole."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import access
from activities.pickup.credentials import put_credential
from activities.pickup.errors import not_found
from activities.pickup.guardian_access import sync_guardian
from activities.pickup.kick import Kicker
from activities.pickup.operator.credentials import swap_exit
from activities.pickup.records import audit, broadcast_roster
from activities.pickup.roster_csv import RosterLine, parse_roster
from activities.pickup.roster_plan import (
    CREDENTIAL_TAKEN,
    UNKNOWN_GUARDIAN,
    UNKNOWN_STUDENT,
    plan_roster,
    student_credential,
)
from shared.contracts.pickup import PickupState, SubjectKind
from shared.db.models import as_utc, utcnow
from shared.db.pickup_models import Credential, Guardian, GuardianLink, School, Student
from shared.errors import EsteiraError

Sessions = async_sessionmaker[AsyncSession]


@dataclass
class RosterReport:
    """Per line what was created, updated or left unchanged, or why it was refused."""

    dry_run: bool
    lines: list[dict[str, Any]] = field(default_factory=list)
    written: bool = False

    @property
    def refused(self) -> int:
        """How many lines were refused (any one means nothing was written)."""
        return sum(1 for line in self.lines if "reason" in line)

    def as_dict(self) -> dict[str, Any]:
        """The JSON report."""
        counts: dict[str, Counter] = {k: Counter() for k in ("student", "guardian", "link")}
        for line in self.lines:
            for key, counter in counts.items():
                if key in line:
                    counter[line[key]] += 1
        return {"dry_run": self.dry_run, "written": self.written, "refused": self.refused,
                "summary": {k: dict(v) for k, v in counts.items()},
                "lines": sorted(self.lines, key=lambda line: line["line"])}


class _Rollback(Exception):
    """Leaves a batch's transaction without committing (a line refused at write time)."""


async def import_roster(sessions: Sessions, *, school_id: int, text: str, dry_run: bool,
                        actor: str, kicker: Kicker | None = None,
                        ready_timeout: timedelta = timedelta(minutes=60),
                        batch_lines: int = 200) -> RosterReport:
    """Check the whole file reading only; a refused line (or `dry_run`) writes nothing.

    Then write it `batch_lines` lines per transaction, so SQLite's write lock is held for a
    batch at a time and every other writer gets in between; a line refused only at write
    time (someone changed a row meanwhile) stops there, with the earlier batches kept —
    each line is an upsert, so sending the file again finishes it.
    """
    checked, refused = parse_roster(text)
    report = RosterReport(dry_run=dry_run)
    report.lines += [{"line": r.line, "reason": r.reason} for r in refused]
    async with sessions() as session:
        if await session.get(School, school_id) is None:
            raise not_found("School", school_id)
        planned = await plan_roster(session, school_id, checked)
    if report.refused or dry_run or any("reason" in line for line in planned):
        report.lines += planned
        return report
    at, granted = utcnow(), False
    for start in range(0, len(checked), batch_lines):
        outcomes: list[dict[str, Any]] = []
        try:
            async with sessions() as session, session.begin():
                importer = _Importer(session, school_id, at, actor, ready_timeout)
                for line in checked[start:start + batch_lines]:
                    outcomes.append(await importer.apply(line))
                    if "reason" in outcomes[-1]:
                        raise _Rollback
        except _Rollback:
            report.lines += [o for o in outcomes if "reason" in o]
            break
        report.lines += outcomes
        report.written = True
        granted |= importer.granted
        await asyncio.sleep(0)  # the other writers of this process go between batches
    if granted and kicker is not None:
        await kicker.drains({school_id})
    return report


class _Importer:
    """Upserts of one file, in the caller's transaction (rows flushed as they go)."""

    def __init__(self, session: AsyncSession, school_id: int, at: datetime, actor: str,
                 ready_timeout: timedelta) -> None:
        self.session, self.school_id, self.at, self.actor = session, school_id, at, actor
        self.ready_timeout = ready_timeout
        self.granted = False  # a credential changed on the school's turnstile

    async def apply(self, line: RosterLine) -> dict[str, Any]:
        outcome: dict[str, Any] = {"line": line.line}
        student, outcome["student"] = await self._student(line)
        if student is None:
            return {"line": line.line, "reason": UNKNOWN_STUDENT.format(line.registration)}
        if line.card_value is not None or line.qr_value is not None:
            try:
                await self._credential(student, line)
            except EsteiraError:
                return {"line": line.line, "reason": CREDENTIAL_TAKEN}
        if line.cpf is None:
            return outcome
        guardian, outcome["guardian"] = await self._guardian(line)
        if guardian is None:
            return {"line": line.line, "reason": UNKNOWN_GUARDIAN}
        outcome["link"] = await self._link(line, student, guardian)
        if outcome["link"] != "unchanged":
            self.granted |= await sync_guardian(self.session, guardian_id=guardian.id,
                                                school_id=self.school_id, at=self.at)
        outcome.update(student_id=student.id, guardian_id=guardian.id)
        return outcome

    async def _student(self, line: RosterLine) -> tuple[Student | None, str]:
        student = (await self.session.exec(select(Student).where(
            Student.school_id == self.school_id,
            Student.registration == line.registration))).first()
        if student is None:
            if line.student_name is None:
                return None, "refused"
            student = Student(school_id=self.school_id, name=line.student_name,
                              registration=line.registration)
            self.session.add(student)
            await self.session.flush()
            self._audit("student", student.id, "created")
            return student, "created"
        if line.student_name is None or line.student_name == student.name:
            return student, "unchanged"
        await self._revise(student, {"name": line.student_name})
        self._audit("student", student.id, "updated")
        return student, "updated"

    async def _credential(self, student: Student, line: RosterLine) -> None:
        """The student's card / QR code as the line gives it (swapped on the device if READY)."""
        held = (await self.session.exec(select(Credential).where(
            Credential.school_id == self.school_id, Credential.holder_kind == SubjectKind.STUDENT,
            Credential.holder_id == student.id))).first()
        current = (held.card_value, held.qr_value) if held else (None, None)
        card, qr = student_credential(current, line)
        if (card, qr) == current:
            return
        credential, _ = await put_credential(
            self.session, school_id=self.school_id, holder_kind=SubjectKind.STUDENT,
            holder_id=student.id, card_value=card, qr_value=qr, at=self.at)
        self._audit("student", student.id, "credential-set")
        if student.state == PickupState.READY:
            await swap_exit(self.session, student, credential, self.at, self.ready_timeout)
            self.granted = True

    async def _guardian(self, line: RosterLine) -> tuple[Guardian | None, str]:
        guardian = (await self.session.exec(select(Guardian).where(
            Guardian.cpf == line.cpf))).first()
        if guardian is None:
            if line.guardian_name is None:
                return None, "refused"
            guardian = Guardian(name=line.guardian_name, contact=line.contact, cpf=line.cpf,
                                school_id=self.school_id)
            self.session.add(guardian)
            await self.session.flush()
            self._audit("guardian", guardian.id, "created")
            return guardian, "created"
        changes = {k: v for k, v in (("name", line.guardian_name), ("contact", line.contact))
                   if v is not None and v != getattr(guardian, k)}
        # Another school's guardian is linked, never rewritten by this school's file.
        if not changes or guardian.school_id not in (None, self.school_id):
            return guardian, "unchanged"
        await self._revise(guardian, changes)
        self._audit("guardian", guardian.id, "updated")
        return guardian, "updated"

    async def _link(self, line: RosterLine, student: Student, guardian: Guardian) -> str:
        link = (await self.session.exec(select(GuardianLink).where(
            GuardianLink.student_id == student.id,
            GuardianLink.guardian_id == guardian.id))).first()
        if link is None:
            await access.create_link(self.session, student_id=student.id,
                                     guardian_id=guardian.id, kind=line.kind,
                                     valid_from=line.valid_from, valid_until=line.valid_until,
                                     at=self.at, actor=self.actor)
            return "created"
        wanted = {"kind": line.kind, "valid_from": line.valid_from,
                  "valid_until": line.valid_until}
        have = {"kind": link.kind, "valid_from": _utc(link.valid_from),
                "valid_until": _utc(link.valid_until)}
        if {k: _utc(v) if k != "kind" else v for k, v in wanted.items()} == have:
            return "unchanged"
        await self._revise(link, wanted)
        broadcast_roster(self.session, school_id=self.school_id, student_id=student.id,
                         guardian_id=guardian.id, at=self.at, reason="link-changed",
                         link_id=link.id)
        self._audit("guardian_link", link.id, "updated")
        return "updated"

    async def _revise(self, row: Any, values: dict[str, Any]) -> None:
        # Through the ORM object, so a later line of the same file sees the new values.
        for name, value in values.items():
            setattr(row, name, value)
        row.revision += 1
        await self.session.flush()

    def _audit(self, entity: str, entity_id: int, action: str) -> None:
        audit(self.session, entity=entity, entity_id=entity_id, action=action,
              actor=self.actor, at=self.at, school_id=self.school_id, source="roster")


def _utc(moment: datetime | None) -> datetime | None:
    return as_utc(moment) if moment else None


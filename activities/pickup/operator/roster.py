"""A school's roster from CSV: students, guardians and links, all or nothing per file."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup import access
from activities.pickup.errors import not_found
from activities.pickup.guardian_access import sync_guardian
from activities.pickup.kick import Kicker
from activities.pickup.records import audit, broadcast_roster
from activities.pickup.roster_csv import RosterLine, parse_roster
from shared.db.models import as_utc, utcnow
from shared.db.pickup_models import Guardian, GuardianLink, School, Student

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
    """Leaves the transaction without committing (a refused line, or a dry run)."""


async def import_roster(sessions: Sessions, *, school_id: int, text: str, dry_run: bool,
                        actor: str, kicker: Kicker | None = None) -> RosterReport:
    """Apply every line in one transaction; any refused line (or `dry_run`) writes nothing."""
    checked, refused = parse_roster(text)
    report = RosterReport(dry_run=dry_run)
    report.lines += [{"line": r.line, "reason": r.reason} for r in refused]
    try:
        async with sessions() as session, session.begin():
            if await session.get(School, school_id) is None:
                raise not_found("School", school_id)
            importer = _Importer(session, school_id, utcnow(), actor)
            for line in checked:
                report.lines.append(await importer.apply(line))
            if report.refused or dry_run:
                raise _Rollback
    except _Rollback:
        return report
    report.written = True
    if importer.granted and kicker is not None:
        await kicker.drains({school_id})
    return report


class _Importer:
    """Upserts of one file, in the caller's transaction (rows flushed as they go)."""

    def __init__(self, session: AsyncSession, school_id: int, at: datetime, actor: str) -> None:
        self.session, self.school_id, self.at, self.actor = session, school_id, at, actor
        self.granted = False  # a guardian's credential changed on the school's turnstile

    async def apply(self, line: RosterLine) -> dict[str, Any]:
        outcome: dict[str, Any] = {"line": line.line}
        student, outcome["student"] = await self._student(line)
        if student is None:
            return {"line": line.line, "reason": f"aluno desconhecido: {line.registration} "
                                                 "(sem student_name para criá-lo)"}
        if line.cpf is None:
            return outcome
        guardian, outcome["guardian"] = await self._guardian(line)
        if guardian is None:
            return {"line": line.line, "reason": "responsável desconhecido (sem guardian_name "
                                                 "para criá-lo)"}
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


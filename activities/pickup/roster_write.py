"""One batch of roster lines written set by set: a few statements however many lines.

The batch is played over the rows as they are now (`RosterPlan`, read inside the same
transaction, after the school row is locked), then each kind of change is one statement:
students, guardians, links and credentials inserted or updated in bulk, with their audit rows
and `StudentRosterChanged` events. Only the rare rows with something on a turnstile (a guardian
holding a credential here, a READY student whose card changed) go through the per-row grant
code, so the write lock is held for milliseconds per hundred lines, not seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, update
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import EventType, PickupState, SubjectKind
from activities.pickup.exit_grant import swap_exit
from activities.pickup.guardian_access import sync_guardian
from activities.pickup.models import (
    AuditEntry,
    BoardEvent,
    Credential,
    Guardian,
    GuardianLink,
    School,
    Student,
)
from activities.pickup.records import bulk_insert
from activities.pickup.roster_csv import RosterLine
from activities.pickup.roster_plan import RosterPlan, _chunks


@dataclass
class BatchResult:
    """The batch's line outcomes, and whether a turnstile got something to do."""

    outcomes: list[dict[str, Any]]
    granted: bool = False

    @property
    def refused(self) -> bool:
        """A line can't be applied any more (a row changed since the file was checked)."""
        return any("reason" in outcome for outcome in self.outcomes)


class _Writer:
    """The batch's writes, in the caller's transaction."""

    def __init__(self, session: AsyncSession, plan: RosterPlan, at: datetime,
                 actor: str) -> None:
        self.session, self.plan, self.at, self.actor = session, plan, at, actor
        self.school_id = plan.school_id
        self.audits: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []

    def audit(self, entity: str, entity_id: int, action: str, **details: Any) -> None:
        self.audits.append({"at": self.at, "school_id": self.school_id, "entity": entity,
                            "entity_id": entity_id, "action": action, "from_state": None,
                            "to_state": details.pop("to_state", None), "reason": None,
                            "actor": self.actor, "details": details})

    async def students(self) -> dict[str, int]:
        """Insert / rename the dirty students; registration -> id of every student in play."""
        plan, fresh, renamed = self.plan, [], []
        for registration in sorted(plan.dirty["students"]):
            student = plan.students[registration]
            if isinstance(student["key"], tuple):
                fresh.append({"school_id": self.school_id, "name": student["name"],
                              "state": PickupState.AT_SCHOOL, "version": 0,
                              "state_since": self.at, "state_reason": None,
                              "arrival_id": None, "registration": registration,
                              "revision": 0})
            else:
                renamed.append({"b_id": student["key"], "b_name": student["name"]})
        await bulk_insert(self.session, Student, fresh)
        await _update(self.session, Student, renamed, name="b_name")
        ids = {reg: s["key"] for reg, s in plan.students.items() if isinstance(s["key"], int)}
        for chunk in _chunks(row["registration"] for row in fresh):
            ids.update({reg: ident for ident, reg in (await self.session.exec(
                select(Student.id, Student.registration).where(
                    Student.school_id == self.school_id,
                    Student.registration.in_(chunk)))).all()})
        for row in fresh:
            self.audit("student", ids[row["registration"]], "created", source="roster")
        for row in renamed:
            self.audit("student", row["b_id"], "updated", source="roster")
        return ids

    async def guardians(self) -> dict[str, int]:
        """Insert / update the dirty guardians; cpf -> id of every guardian in play."""
        plan, fresh, changed = self.plan, [], []
        for cpf in sorted(plan.dirty["guardians"]):
            guardian = plan.guardians[cpf]
            if isinstance(guardian["key"], tuple):
                fresh.append({"name": guardian["name"], "contact": guardian["contact"],
                              "cpf": cpf, "school_id": self.school_id, "revision": 0})
            else:
                changed.append({"b_id": guardian["key"], "b_name": guardian["name"],
                                "b_contact": guardian["contact"]})
        await bulk_insert(self.session, Guardian, fresh)
        await _update(self.session, Guardian, changed, name="b_name", contact="b_contact")
        ids = {cpf: g["key"] for cpf, g in plan.guardians.items() if isinstance(g["key"], int)}
        for chunk in _chunks(row["cpf"] for row in fresh):
            ids.update({cpf: ident for ident, cpf in (await self.session.exec(
                select(Guardian.id, Guardian.cpf).where(Guardian.cpf.in_(chunk)))).all()})
        for row in fresh:
            self.audit("guardian", ids[row["cpf"]], "created", source="roster")
        for row in changed:
            self.audit("guardian", row["b_id"], "updated", source="roster")
        return ids

    async def links(self, students: dict[str, int],
                    guardians: dict[str, int]) -> set[int]:
        """Insert / update the dirty links with their events; the guardians they touch."""
        plan, fresh, changed = self.plan, [], []
        for registration, cpf in sorted(plan.dirty["links"]):
            key = (plan.students[registration]["key"], plan.guardians[cpf]["key"])
            kind, valid_from, valid_until = plan.links[key]
            pair = (students[registration], guardians[cpf])
            if pair in plan.link_ids:
                changed.append({"b_id": plan.link_ids[pair], "b_kind": kind,
                                "b_from": valid_from, "b_until": valid_until, "pair": pair})
            else:
                fresh.append({"student_id": pair[0], "guardian_id": pair[1], "kind": kind,
                              "valid_from": valid_from, "valid_until": valid_until,
                              "created_at": self.at, "revision": 0})
        await bulk_insert(self.session, GuardianLink, fresh)
        await _update(self.session, GuardianLink,
                      [{k: v for k, v in row.items() if k != "pair"} for row in changed],
                      kind="b_kind", valid_from="b_from", valid_until="b_until")
        new_ids: dict[tuple[int, int], int] = {}
        for chunk in _chunks({row["student_id"] for row in fresh}):
            new_ids.update({(sid, gid): ident for ident, sid, gid in (await self.session.exec(
                select(GuardianLink.id, GuardianLink.student_id, GuardianLink.guardian_id)
                .where(GuardianLink.student_id.in_(chunk)))).all()})
        for row in fresh:
            link_id = new_ids[(row["student_id"], row["guardian_id"])]
            self._roster_event(row["student_id"], row["guardian_id"], link_id, "link-added")
            self.audit("guardian_link", link_id, "created", to_state=row["kind"],
                       guardian_id=row["guardian_id"])
        for row in changed:
            self._roster_event(*row["pair"], row["b_id"], "link-changed")
            self.audit("guardian_link", row["b_id"], "updated", source="roster")
        return {row["guardian_id"] for row in fresh} | {row["pair"][1] for row in changed}

    def _roster_event(self, student_id: int, guardian_id: int, link_id: int,
                      reason: str) -> None:
        self.events.append({"at": self.at, "type": EventType.STUDENT_ROSTER_CHANGED,
                            "school_id": self.school_id, "student_id": student_id,
                            "guardian_id": guardian_id, "reason": reason,
                            "payload": {"student_id": student_id, "guardian_id": guardian_id,
                                        "link_id": link_id, "change": reason}})

    async def credentials(self, students: dict[str, int], ready_timeout: timedelta) -> bool:
        """The students' cards / QR codes as the lines give them; a READY student's is
        swapped on the device. True when the turnstile got a command."""
        plan = self.plan
        held = {row.holder_id: row for chunk in _chunks(
            students[r] for r in plan.dirty["credentials"]) for row in (await self.session.exec(
                select(Credential).where(Credential.school_id == self.school_id,
                                         Credential.holder_kind == SubjectKind.STUDENT,
                                         Credential.holder_id.in_(chunk)))).all()}
        # Values that move between students of this batch are freed first (unique indexes).
        fresh, swapped = [], False
        moved = [held[students[r]] for r in plan.dirty["credentials"] if students[r] in held]
        for row in moved:
            row.card_value = row.qr_value = None
        await self.session.flush()
        for registration in sorted(plan.dirty["credentials"]):
            sid = students[registration]
            card, qr = plan.credential[plan.students[registration]["key"]]
            if sid in held:
                held[sid].card_value, held[sid].qr_value, held[sid].updated_at = card, qr, self.at
            else:
                fresh.append(Credential(school_id=self.school_id, holder_kind=SubjectKind.STUDENT,
                                        holder_id=sid, card_value=card, qr_value=qr,
                                        created_at=self.at, updated_at=self.at))
            self.audit("student", sid, "credential-set", source="roster")
        self.session.add_all(fresh)
        await self.session.flush()
        for registration in sorted(plan.dirty["credentials"]):
            sid = students[registration]
            if plan.student_state.get(sid) == PickupState.READY:
                student = await self.session.get(Student, sid)
                credential = held.get(sid) or next(c for c in fresh if c.holder_id == sid)
                await swap_exit(self.session, student, credential, self.at, ready_timeout)
                swapped = True
        return swapped

    async def flush_records(self) -> None:
        await bulk_insert(self.session, BoardEvent, self.events)
        await bulk_insert(self.session, AuditEntry, self.audits)


async def _update(session: AsyncSession, model: type, rows: list[dict[str, Any]],
                  **columns: str) -> None:
    """One executemany UPDATE by id (`b_id`), columns from the named parameters,
    `revision` bumped (the records' edit guard)."""
    if not rows:
        return
    table = model.__table__
    await session.exec(update(table).where(table.c.id == bindparam("b_id")).values(
        revision=table.c.revision + 1, **{c: bindparam(p) for c, p in columns.items()}),
        params=rows)


async def write_batch(session: AsyncSession, *, school_id: int, lines: list[RosterLine],
                      at: datetime, actor: str, ready_timeout: timedelta) -> BatchResult:
    """Apply `lines` in the caller's transaction (rolled back by the caller if refused)."""
    # Taken first: on SQLite the write lock (no stale read to upgrade), on PostgreSQL the
    # school's row, so two imports of one school go one batch at a time.
    await session.exec(update(School).where(School.id == school_id)
                       .values(name=School.name))
    plan = RosterPlan(school_id)
    await plan.load(session, lines)
    result = BatchResult([plan.play(line) for line in lines])
    if result.refused:
        return result
    writer = _Writer(session, plan, at, actor)
    students = await writer.students()
    guardians = await writer.guardians()
    touched = await writer.links(students, guardians)
    result.granted = await writer.credentials(students, ready_timeout)
    await writer.flush_records()
    # Only a guardian holding a credential here has anything on the turnstile to follow.
    holders = set()
    for chunk in _chunks(touched):
        holders |= set((await session.exec(select(Credential.holder_id).where(
            Credential.school_id == school_id, Credential.holder_kind == SubjectKind.GUARDIAN,
            Credential.holder_id.in_(chunk)))).all())
    for guardian_id in sorted(holders):
        result.granted |= await sync_guardian(session, guardian_id=guardian_id,
                                              school_id=school_id, at=at)
    for outcome, line in zip(result.outcomes, lines, strict=True):
        if line.cpf is not None:
            outcome.update(student_id=students[line.registration],
                           guardian_id=guardians[line.cpf])
    return result

"""A roster file's outcome worked out by reading only: the dry run, and the check before writing.

The rows the file touches are read in a few set queries and the file is played over them in
memory, line by line with the same rules the import applies, so a dry run (or a file with a
refused line) never opens a write transaction and never holds SQLite's write lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.contracts.board import SubjectKind
from activities.pickup.models import Credential, Guardian, GuardianLink, Student
from activities.pickup.roster_csv import RosterLine
from shared.db.models import as_utc

# Rows fetched per IN (...) query: far below SQLite's and asyncpg's parameter limits.
CHUNK = 2000
UNKNOWN_STUDENT = "aluno desconhecido: {} (sem student_name para criá-lo)"
UNKNOWN_GUARDIAN = "responsável desconhecido (sem guardian_name para criá-lo)"
CREDENTIAL_TAKEN = "cartão ou QR do aluno já é de outra pessoa nesta escola"


def _chunks(values: Iterable[Any]) -> Iterable[list[Any]]:
    ordered = sorted(values)
    for start in range(0, len(ordered), CHUNK):
        yield ordered[start:start + CHUNK]


def student_credential(current: tuple[int | None, str | None],
                       line: RosterLine) -> tuple[int | None, str | None]:
    """The student's credential after the line: a value given replaces that value only."""
    card, qr = current
    return (line.card_value if line.card_value is not None else card,
            line.qr_value if line.qr_value is not None else qr)


class RosterPlan:
    """The school's rows the file touches, as plain values, changed in memory line by line."""

    def __init__(self, school_id: int) -> None:
        self.school_id = school_id
        self.students: dict[str, dict[str, Any]] = {}  # registration -> {key, name}
        self.guardians: dict[str, dict[str, Any]] = {}  # cpf -> {key, name, contact, school}
        self.links: dict[tuple[Any, Any], tuple[Any, ...]] = {}
        self.credential: dict[Any, tuple[int | None, str | None]] = {}  # student key -> values
        self.cards: dict[int, Any] = {}  # value -> holder (kind, id) at the school
        self.qrs: dict[str, Any] = {}
        self.link_ids: dict[tuple[int, int], int] = {}
        self.student_state: dict[int, str] = {}
        # What the lines changed, for the writer: keys of created / updated rows.
        self.dirty: dict[str, set[Any]] = {"students": set(), "guardians": set(),
                                           "links": set(), "credentials": set()}

    async def load(self, session: AsyncSession, lines: list[RosterLine]) -> None:
        """Read what the file's lines refer to (one query per kind and chunk)."""
        for chunk in _chunks({line.registration for line in lines}):
            for row in (await session.exec(select(Student.id, Student.registration,
                                                  Student.name, Student.state).where(
                    Student.school_id == self.school_id,
                    Student.registration.in_(chunk)))).all():
                self.students[row[1]] = {"key": row[0], "name": row[2]}
                self.student_state[row[0]] = row[3]
        for chunk in _chunks({line.cpf for line in lines if line.cpf}):
            for row in (await session.exec(select(Guardian.id, Guardian.cpf, Guardian.name,
                                                  Guardian.contact, Guardian.school_id)
                                           .where(Guardian.cpf.in_(chunk)))).all():
                self.guardians[row[1]] = {"key": row[0], "name": row[2], "contact": row[3],
                                          "school": row[4]}
        for chunk in _chunks(s["key"] for s in self.students.values()):
            for ident, sid, gid, kind, since, until in (await session.exec(select(
                    GuardianLink.id, GuardianLink.student_id, GuardianLink.guardian_id,
                    GuardianLink.kind, GuardianLink.valid_from, GuardianLink.valid_until)
                    .where(GuardianLink.student_id.in_(chunk)))).all():
                self.links[(sid, gid)] = _link_values(kind, since, until)
                self.link_ids[(sid, gid)] = ident
        if any(line.card_value is not None or line.qr_value is not None for line in lines):
            for row in (await session.exec(select(Credential).where(
                    Credential.school_id == self.school_id))).all():
                holder = (row.holder_kind, row.holder_id)
                if row.card_value is not None:
                    self.cards[row.card_value] = holder
                if row.qr_value is not None:
                    self.qrs[row.qr_value] = holder
                if row.holder_kind == SubjectKind.STUDENT:
                    self.credential[row.holder_id] = (row.card_value, row.qr_value)

    def play(self, line: RosterLine) -> dict[str, Any]:
        """The line's outcome, as the import would report it; the plan then holds its result."""
        outcome: dict[str, Any] = {"line": line.line}
        student = self.students.get(line.registration)
        if student is None:
            if line.student_name is None:
                return {"line": line.line, "reason": UNKNOWN_STUDENT.format(line.registration)}
            student = self.students[line.registration] = {
                "key": ("new-student", line.registration), "name": line.student_name,
                "registration": line.registration}
            outcome["student"] = "created"
        elif line.student_name is None or line.student_name == student["name"]:
            outcome["student"] = "unchanged"
        else:
            student["name"] = line.student_name
            outcome["student"] = "updated"
        if outcome["student"] != "unchanged":
            self.dirty["students"].add(line.registration)
        if line.card_value is not None or line.qr_value is not None:
            taken = self._credential(student["key"], line)
            if taken:
                return {"line": line.line, "reason": CREDENTIAL_TAKEN}
        if line.cpf is None:
            return outcome
        guardian = self.guardians.get(line.cpf)
        if guardian is None:
            if line.guardian_name is None:
                return {"line": line.line, "reason": UNKNOWN_GUARDIAN}
            guardian = self.guardians[line.cpf] = {
                "key": ("new-guardian", line.cpf), "name": line.guardian_name,
                "contact": line.contact, "school": self.school_id}
            outcome["guardian"] = "created"
        else:
            changes = {k: v for k, v in (("name", line.guardian_name), ("contact", line.contact))
                       if v is not None and v != guardian[k]}
            if changes and guardian["school"] in (None, self.school_id):
                guardian.update(changes)
                outcome["guardian"] = "updated"
            else:
                outcome["guardian"] = "unchanged"
        if outcome["guardian"] != "unchanged":
            self.dirty["guardians"].add(line.cpf)
        key = (student["key"], guardian["key"])
        wanted = _link_values(line.kind, line.valid_from, line.valid_until)
        have = self.links.get(key)
        outcome["link"] = "created" if have is None else (
            "unchanged" if have == wanted else "updated")
        self.links[key] = wanted
        if outcome["link"] != "unchanged":
            self.dirty["links"].add((line.registration, line.cpf))
        return outcome

    def _credential(self, student_key: Any, line: RosterLine) -> bool:
        """Apply the line's card / QR code to the student; True if someone else holds one."""
        holder = (SubjectKind.STUDENT, student_key)
        current = self.credential.get(student_key, (None, None))
        card, qr = student_credential(current, line)
        if (card, qr) == current:
            return False
        if (card is not None and self.cards.get(card, holder) != holder) or (
                qr is not None and self.qrs.get(qr, holder) != holder):
            return True
        for value, index in ((current[0], self.cards), (current[1], self.qrs)):
            if value is not None:
                index.pop(value, None)
        if card is not None:
            self.cards[card] = holder
        if qr is not None:
            self.qrs[qr] = holder
        self.credential[student_key] = (card, qr)
        self.dirty["credentials"].add(line.registration)
        return False


def _link_values(kind: str, valid_from: Any, valid_until: Any) -> tuple[Any, ...]:
    return (str(kind), as_utc(valid_from) if valid_from else None,
            as_utc(valid_until) if valid_until else None)


async def plan_roster(session: AsyncSession, school_id: int,
                      lines: list[RosterLine]) -> list[dict[str, Any]]:
    """Every line's outcome, reading only."""
    plan = RosterPlan(school_id)
    await plan.load(session, lines)
    return [plan.play(line) for line in lines]

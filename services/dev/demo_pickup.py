"""The first run's pickup demo: a school with a small roster, guardians with credentials and a
board whose cards move (an arrival, a READY, a turnstile exit through the simulator).

Every pickup call of the demo is in this module, through the pickup face."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import httpx

from activities.pickup.contracts.board import Kind
from activities.pickup.operator import PickupOperations
from shared.settings import Settings

log = logging.getLogger("esteira.demo")
SCHOOL = "Escola Demo"
ACTOR = "demo"
ARRIVAL_TIMEOUT_MINUTES = 30.0
# (student, registration, card at the turnstile); (guardian, contact, QR code, the student).
STUDENTS = (("Ana Demo", "DEMO-001", 7_100_001), ("Bruno Demo", "DEMO-002", 7_100_002),
            ("Clara Demo", "DEMO-003", 7_100_003))
GUARDIANS = (("Maria Demo", "maria@demo.invalid", "DEMO-QR-MARIA", "DEMO-001"),
             ("João Demo", "joao@demo.invalid", "DEMO-QR-JOAO", "DEMO-003"))
AT_SCHOOL, AWAITING, READY = "AT_SCHOOL", "AWAITING", "READY"
# The grant reaches the turnstile through the ledger's workflow: the exit is tried this long.
EXIT_ATTEMPTS, EXIT_PAUSE_SECONDS = 30, 2.0


@dataclass(frozen=True)
class PickupDemo:
    """The demo school's id, and whether this run created it."""

    school_id: int
    created: bool


async def seed_school(pickup: PickupOperations, settings: Settings) -> PickupDemo:
    """The demo school, its roster and guardians, once: found by name on a later run."""
    found = [s for s in await pickup.schools.all() if s.name == SCHOOL]
    if found:
        assert found[0].id is not None
        return PickupDemo(found[0].id, created=False)
    school = await pickup.schools.create(
        actor=ACTOR, name=SCHOOL, arrival_timeout_minutes=ARRIVAL_TIMEOUT_MINUTES,
        turnstile_url=f"http://{settings.host}:{settings.ports.turnstile}")
    assert school.id is not None
    students = {}
    for name, registration, card in STUDENTS:
        student = await pickup.records.create_student(
            actor=ACTOR, school_id=school.id, name=name, registration=registration, card_value=card)
        students[registration] = student.id
    for name, contact, qr, registration in GUARDIANS:
        guardian = await pickup.records.create_guardian(actor=ACTOR, name=name,
                                                        contact=contact, school_id=school.id,
                                                        qr_value=qr)
        assert guardian.id is not None
        await pickup.access.link_guardian(student_id=students[registration],
                                          guardian_id=guardian.id, kind=Kind.PERMANENT,
                                          valid_from=None, valid_until=None, actor=ACTOR)
    # The controller tells the board of an exit only once its Monitor points at us.
    try:
        await pickup.monitor.configure(
            school_id=school.id, actor=ACTOR,
            public_base_url=f"http://{settings.host}:{settings.ports.api}")
    except Exception as exc:  # the board still moves; only the exit won't be reported
        log.warning("Demo: the turnstile's Monitor could not be pointed at the board: %s", exc)
    return PickupDemo(school.id, created=True)


async def move_cards(pickup: PickupOperations, school_id: int) -> list[str]:
    """Today's moves, for students still AT_SCHOOL (a restart the same day moves nothing):
    the first arrives, the second is READY, the third READY and out through the turnstile."""
    moved = []
    by_registration = {s.registration: s
                       for s in await pickup.board.students_of_school(school_id)}
    for index, (_name, registration, _card) in enumerate(STUDENTS):
        student = by_registration.get(registration)
        if student is None or student.state != AT_SCHOOL or student.id is None:
            continue
        student = await pickup.board.signal_arrival(student_id=student.id, actor=ACTOR)
        moved.append(f"{registration} {AWAITING}")
        if index >= 1:
            assert student.id is not None
            student = await pickup.board.mark_ready(student_id=student.id,
                                                    version=student.version, actor=ACTOR)
            moved.append(f"{registration} {READY}")
    return moved


async def exit_through_turnstile(settings: Settings, card: int = STUDENTS[2][2]) -> bool:
    """Present the READY student's card at the turnstile simulator until the grant has
    reached it and the arm turns (the controller then tells the board)."""
    url = f"http://{settings.host}:{settings.ports.turnstile}/_sim/access"
    async with httpx.AsyncClient(timeout=5) as http:
        for _attempt in range(EXIT_ATTEMPTS):
            try:
                answer = await http.post(url, json={"card_value": card})
                if answer.is_success and answer.json().get("access_event_id") is not None:
                    return True
            except (httpx.HTTPError, ValueError):
                pass
            await asyncio.sleep(EXIT_PAUSE_SECONDS)
    log.warning("Demo: the turnstile did not let card %s out; open /pickup to see why", card)
    return False

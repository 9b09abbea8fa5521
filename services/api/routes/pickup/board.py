"""The pickup board: students' states and the operator's transitions, audit and the ledger."""

from __future__ import annotations

from datetime import date

from fastapi import APIRouter

from activities.pickup.contracts.board import LedgerStatus
from services.api.routes.pickup.answers import (
    AuditEntry,
    Board,
    LedgerEntry,
    LedgerPage,
    MonitorConfigured,
    QueuedLedgerEntry,
    School,
    Student,
    paged,
)
from services.api.routes.pickup.deps import Actor, Cursor, Limit, SchoolScope
from services.api.routes.pickup.schemas import MonitorTarget, Versioned
from services.app_context import PickupFace
from shared.wire import PageOut

router = APIRouter()


@router.get("/schools/{school_id}/board", response_model=Board)
async def board(school_id: int, pickup: PickupFace) -> Board:
    """Every student of the school with state and version (SSE: `/board/events`)."""
    school, students = await pickup.board.school_board(school_id)
    return Board(school=School.model_validate(school),
                 students=[Student.model_validate(s) for s in students])


@router.get("/students/{student_id}", response_model=Student)
async def get_student(student_id: int, pickup: PickupFace) -> Student:
    """One student's pickup state."""
    return Student.model_validate(await pickup.board.student(student_id))


@router.post("/students/{student_id}/arrival", response_model=Student)
async def arrival(student_id: int, pickup: PickupFace, actor: Actor) -> Student:
    """An arrival signal recorded by staff (the guardian app has its own route)."""
    return Student.model_validate(await pickup.board.signal_arrival(student_id=student_id,
                                                                    actor=actor))


@router.post("/students/{student_id}/ready", response_model=Student)
async def ready(student_id: int, body: Versioned, pickup: PickupFace, actor: Actor) -> Student:
    """AWAITING -> READY: grant the exit credential and start the READY timer."""
    return Student.model_validate(await pickup.board.mark_ready(
        student_id=student_id, version=body.version, actor=actor))


@router.post("/students/{student_id}/pickup", response_model=Student)
async def pickup_confirmed(student_id: int, body: Versioned, pickup: PickupFace,
                           actor: Actor) -> Student:
    """READY -> PICKED_UP confirmed by the operator (409 if the version moved on)."""
    return Student.model_validate(await pickup.board.confirm_pickup(
        student_id=student_id, version=body.version, actor=actor))


@router.post("/students/{student_id}/undo", response_model=Student)
async def undo(student_id: int, body: Versioned, pickup: PickupFace, actor: Actor) -> Student:
    """Undo staff's last step: READY -> AWAITING, or an operator's PICKED_UP -> READY."""
    return Student.model_validate(await pickup.board.undo(
        student_id=student_id, version=body.version, actor=actor))


@router.get("/audit", response_model=PageOut[AuditEntry])
async def audit_trail(pickup: PickupFace, scope: SchoolScope, entity: str | None = None,
                      entity_id: int | None = None, student_id: int | None = None,
                      school_id: int | None = None, day: date | None = None,
                      limit: Limit = 100, cursor: Cursor = None) -> PageOut[AuditEntry]:
    """Audit rows, newest first; `day` (in the school's zone) needs student_id or school_id."""
    # A school-scoped key reads its own school's rows only.
    school_id = pickup.scope.school_filter(scope, school_id)
    if student_id is not None:
        await pickup.scope.check_student(scope, student_id)
    if day is not None:
        page = await pickup.audit.of_day(day=day, student_id=student_id, school_id=school_id,
                                         limit=limit, cursor=cursor)
    else:
        if student_id is not None:
            entity, entity_id = "student", student_id
        page = await pickup.audit.trail(entity=entity, entity_id=entity_id,
                                        school_id=school_id if scope else None, limit=limit,
                                        cursor=cursor)
    return paged(AuditEntry, page)


@router.get("/ledger", response_model=LedgerPage)
async def ledger(pickup: PickupFace, scope: SchoolScope, status: LedgerStatus | None = None,
                 controller: int | None = None, limit: Limit = 100,
                 cursor: Cursor = None) -> LedgerPage:
    """Outbound commands in id order (pending ones are not yet confirmed by the controller)
    and the whole ledger's totals."""
    # Its totals span every controller: an operation for the global key.
    pickup.scope.require_global(scope, "The ledger")
    found = await pickup.ledger.entries(status=status, controller=controller, limit=limit,
                                        cursor=cursor)
    return LedgerPage(items=[QueuedLedgerEntry.at(e, found.read_at) for e in found.page.items],
                      next_cursor=found.page.next_cursor,
                      pending=found.backlog.pending, failed=found.backlog.failed,
                      oldest_pending_seconds=found.backlog.oldest_pending_seconds)


@router.post("/ledger/{entry_id}/retry", response_model=LedgerEntry)
async def retry_entry(entry_id: int, pickup: PickupFace, actor: Actor) -> LedgerEntry:
    """Put a refused (failed) command back in the queue."""
    return LedgerEntry.model_validate(await pickup.ledger.retry(entry_id=entry_id, actor=actor))


@router.post("/schools/{school_id}/turnstile/monitor", response_model=MonitorConfigured)
async def configure_monitor(school_id: int, body: MonitorTarget, pickup: PickupFace,
                            actor: Actor) -> MonitorConfigured:
    """Point the school's controller Monitor at our monitor route (token in the path)."""
    target = await pickup.monitor.configure(school_id=school_id,
                                            public_base_url=body.public_base_url, actor=actor)
    return MonitorConfigured(
        monitor=f"{target.scheme}://{target.host}:{target.port}/…/{school_id}/***")

"""The pickup board: students' states and the operator's transitions, audit and the ledger."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from fastapi import APIRouter, Query

from activities.pickup.contracts.board import LedgerStatus
from activities.pickup.operator import audit, monitor
from activities.pickup.operator import board as operations
from activities.pickup.operator import day as school_day
from activities.pickup.operator import ledger as outbound
from activities.pickup.operator import scope as school_scope
from services.api.routes.pickup.answers import (
    AuditList,
    Board,
    Ledger,
    StudentAnswer,
)
from services.api.routes.pickup.deps import Actor, Kick, Pickup, SchoolScope, Sessions
from services.api.routes.pickup.schemas import MonitorTarget, Versioned
from services.app_context import ContextDep
from shared.db.models import as_utc, utcnow

router = APIRouter()


@router.get("/schools/{school_id}/board", response_model=Board)
async def board(school_id: int, sessions: Sessions) -> dict[str, Any]:
    """Every student of the school with state and version (SSE: `/board/events`)."""
    school, students = await operations.school_board(sessions, school_id)
    return {"school": school.model_dump(mode="json"),
            "students": [s.model_dump(mode="json") for s in students]}


@router.get("/students/{student_id}", response_model=StudentAnswer)
async def get_student(student_id: int, sessions: Sessions) -> dict[str, Any]:
    """One student's pickup state."""
    return (await operations.get_student(sessions, student_id)).model_dump(mode="json")


@router.post("/students/{student_id}/arrival", response_model=StudentAnswer)
async def arrival(student_id: int, sessions: Sessions, actor: Actor, kick: Kick
                  ) -> dict[str, Any]:
    """An arrival signal recorded by staff (the guardian app has its own route)."""
    student = await operations.signal_arrival(sessions, kick, student_id=student_id, actor=actor)
    return student.model_dump(mode="json")


@router.post("/students/{student_id}/ready", response_model=StudentAnswer)
async def ready(student_id: int, body: Versioned, sessions: Sessions, actor: Actor, kick: Kick,
                pickup: Pickup) -> dict[str, Any]:
    """AWAITING -> READY: grant the exit credential and start the READY timer."""
    student = await operations.mark_ready(
        sessions, kick, student_id=student_id, version=body.version, actor=actor,
        ready_timeout=timedelta(minutes=pickup.ready_timeout_minutes))
    return student.model_dump(mode="json")


@router.post("/students/{student_id}/pickup", response_model=StudentAnswer)
async def pickup_confirmed(student_id: int, body: Versioned, sessions: Sessions, actor: Actor,
                           kick: Kick) -> dict[str, Any]:
    """READY -> PICKED_UP confirmed by the operator (409 if the version moved on)."""
    student = await operations.confirm_pickup(sessions, kick, student_id=student_id,
                                              version=body.version, actor=actor)
    return student.model_dump(mode="json")


@router.post("/students/{student_id}/undo", response_model=StudentAnswer)
async def undo(student_id: int, body: Versioned, sessions: Sessions, actor: Actor, kick: Kick,
               pickup: Pickup) -> dict[str, Any]:
    """Undo staff's last step: READY -> AWAITING, or an operator's PICKED_UP -> READY."""
    student = await operations.undo(
        sessions, kick, student_id=student_id, version=body.version, actor=actor,
        ready_timeout=timedelta(minutes=pickup.ready_timeout_minutes))
    return student.model_dump(mode="json")


@router.get("/audit", response_model=AuditList)
async def audit_trail(sessions: Sessions, entity: str | None = None,
                      entity_id: int | None = None, student_id: int | None = None,
                      school_id: int | None = None, day: date | None = None,
                      limit: int = Query(100, ge=1, le=1000),
                      scope: SchoolScope = None) -> list[dict[str, Any]]:
    """Audit rows, newest first; `day` (in the school's zone) needs student_id or school_id."""
    # A school-scoped key reads its own school's rows only.
    school_id = school_scope.school_filter(scope, school_id)
    if student_id is not None:
        await school_scope.check_student(sessions, scope, student_id)
    if day is not None:
        rows = await school_day.audit_of_day(sessions, day=day, student_id=student_id,
                                             school_id=school_id, limit=limit)
    else:
        if student_id is not None:
            entity, entity_id = "student", student_id
        rows = await audit.audit_trail(sessions, entity=entity, entity_id=entity_id,
                                       limit=limit, school_id=school_id if scope else None)
    return [row.model_dump(mode="json") for row in rows]


@router.get("/ledger", response_model=Ledger)
async def ledger(sessions: Sessions, status: LedgerStatus | None = None,
                 controller: int | None = None,
                 limit: int = Query(100, ge=1, le=1000),
                 scope: SchoolScope = None) -> dict[str, Any]:
    """Outbound commands (pending ones are not yet confirmed by the controller) and totals."""
    # Its totals span every controller: an operation for the global key.
    school_scope.require_global(scope, "The ledger")
    now = utcnow()
    entries, backlog = await outbound.ledger_entries(sessions, status=status,
                                                     controller=controller, limit=limit)
    return {
        "pending": backlog.pending, "failed": backlog.failed,
        "oldest_pending_seconds": backlog.oldest_pending_seconds,
        "entries": [{**e.model_dump(mode="json"),
                     "age_seconds": (now - as_utc(e.created_at)).total_seconds()}
                    for e in entries],
    }


@router.post("/ledger/{entry_id}/retry")
async def retry_entry(entry_id: int, sessions: Sessions, actor: Actor, kick: Kick
                      ) -> dict[str, Any]:
    """Put a refused (failed) command back in the queue."""
    await outbound.retry_entry(sessions, kick, entry_id=entry_id, actor=actor)
    return {"id": entry_id, "status": LedgerStatus.PENDING}


@router.post("/schools/{school_id}/turnstile/monitor")
async def configure_monitor(school_id: int, body: MonitorTarget, ctx: ContextDep,
                            sessions: Sessions) -> dict[str, str]:
    """Point the school's controller Monitor at our monitor route (token in the path)."""
    target = await monitor.configure_monitor(sessions, ctx.settings, school_id=school_id,
                                             public_base_url=body.public_base_url)
    return {"monitor": f"{target.scheme}://{target.host}:{target.port}/…/{school_id}/***"}

"""The pickup board: students' states and the operator's transitions, audit and the ledger."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from fastapi import APIRouter, Query, Request
from sqlmodel import select, update

from activities.pickup.board import confirm_pickup, mark_ready, signal_arrival
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.records import audit
from activities.pickup.sweeps import queue_backlog
from activities.pickup.turnstile_client import TurnstileError
from activities.pickup.wiring import dev_turnstile_url, turnstile_clients
from services.api.routes.pickup.deps import Actor, Kick, Pickup, Sessions
from services.api.routes.pickup.schemas import MonitorTarget, Versioned
from shared.contracts.pickup import LedgerStatus, PickupErrorCode
from shared.db.models import as_utc, utcnow
from shared.db.pickup_models import AuditEntry, LedgerEntry, School, Student

router = APIRouter()


@router.get("/schools/{school_id}/board")
async def board(school_id: int, sessions: Sessions) -> dict[str, Any]:
    """Every student of the school with state and version (SSE: `/board/events`)."""
    async with sessions() as session:
        school = await session.get(School, school_id)
        if school is None:
            raise not_found("School", school_id)
        students = (await session.exec(select(Student).where(Student.school_id == school_id)
                                       .order_by(Student.id))).all()
    return {"school": school.model_dump(mode="json"),
            "students": [s.model_dump(mode="json") for s in students]}


@router.get("/students/{student_id}")
async def get_student(student_id: int, sessions: Sessions) -> dict[str, Any]:
    """One student's pickup state."""
    async with sessions() as session:
        student = await session.get(Student, student_id)
    if student is None:
        raise not_found("Student", student_id)
    return student.model_dump(mode="json")


@router.post("/students/{student_id}/arrival")
async def arrival(student_id: int, sessions: Sessions, actor: Actor, kick: Kick
                  ) -> dict[str, Any]:
    """An arrival signal recorded by staff (the guardian app has its own route)."""
    async with sessions() as session, session.begin():
        change = await signal_arrival(session, student_id=student_id, guardian_id=None,
                                      at=utcnow(), actor=actor)
    await kick.after(timers=change.timers)
    return change.student.model_dump(mode="json")


@router.post("/students/{student_id}/ready")
async def ready(student_id: int, body: Versioned, sessions: Sessions, actor: Actor, kick: Kick,
                pickup: Pickup) -> dict[str, Any]:
    """AWAITING -> READY: grant the exit credential and start the READY timer."""
    async with sessions() as session, session.begin():
        change = await mark_ready(session, student_id=student_id, version=body.version,
                                  at=utcnow(), actor=actor,
                                  ready_timeout=timedelta(minutes=pickup.ready_timeout_minutes))
    await kick.after(controllers=change.controllers, timers=change.timers)
    return change.student.model_dump(mode="json")


@router.post("/students/{student_id}/pickup")
async def pickup_confirmed(student_id: int, body: Versioned, sessions: Sessions, actor: Actor,
                           kick: Kick) -> dict[str, Any]:
    """READY -> PICKED_UP confirmed by the operator (409 if the version moved on)."""
    async with sessions() as session, session.begin():
        change = await confirm_pickup(session, student_id=student_id, version=body.version,
                                      at=utcnow(), actor=actor, origin="operator")
    await kick.after(controllers=change.controllers)
    return change.student.model_dump(mode="json")


@router.get("/audit")
async def audit_trail(sessions: Sessions, entity: str | None = None,
                      entity_id: int | None = None,
                      limit: int = Query(100, ge=1, le=1000)) -> list[dict[str, Any]]:
    """Audit rows, newest first."""
    query = select(AuditEntry).order_by(AuditEntry.id.desc()).limit(limit)
    if entity:
        query = query.where(AuditEntry.entity == entity)
    if entity_id is not None:
        query = query.where(AuditEntry.entity_id == entity_id)
    async with sessions() as session:
        return [row.model_dump(mode="json") for row in (await session.exec(query)).all()]


@router.get("/ledger")
async def ledger(sessions: Sessions, status: LedgerStatus | None = None,
                 controller: int | None = None,
                 limit: int = Query(100, ge=1, le=1000)) -> dict[str, Any]:
    """Outbound commands (pending ones are not yet confirmed by the controller) and totals."""
    query = select(LedgerEntry).order_by(LedgerEntry.id).limit(limit)
    if status is not None:
        query = query.where(LedgerEntry.status == status)
    if controller is not None:
        query = query.where(LedgerEntry.controller == controller)
    now = utcnow()
    async with sessions() as session:
        entries = (await session.exec(query)).all()
        pending, failed, oldest = await queue_backlog(session, LedgerEntry)
    return {
        "pending": pending, "failed": failed,
        "oldest_pending_seconds": (now - as_utc(oldest)).total_seconds() if oldest else 0.0,
        "entries": [{**e.model_dump(mode="json"),
                     "age_seconds": (now - as_utc(e.created_at)).total_seconds()}
                    for e in entries],
    }


@router.post("/ledger/{entry_id}/retry")
async def retry_entry(entry_id: int, sessions: Sessions, actor: Actor, kick: Kick
                      ) -> dict[str, Any]:
    """Put a refused (failed) command back in the queue."""
    async with sessions() as session, session.begin():
        entry = await session.get(LedgerEntry, entry_id)
        if entry is None:
            raise not_found("Ledger entry", entry_id)
        result = await session.exec(update(LedgerEntry).where(
            LedgerEntry.id == entry_id, LedgerEntry.status == LedgerStatus.FAILED,
        ).values(status=LedgerStatus.PENDING))
        if result.rowcount != 1:
            raise pickup_error(PickupErrorCode.LEDGER_NOT_FAILED,
                               f"Ledger entry {entry_id} is {entry.status}.")
        audit(session, entity="ledger", entity_id=entry_id, action="retry", actor=actor,
              at=utcnow(), school_id=entry.controller, from_state=LedgerStatus.FAILED,
              to_state=LedgerStatus.PENDING)
    await kick.drains([entry.controller])
    return {"id": entry_id, "status": LedgerStatus.PENDING}


@router.post("/schools/{school_id}/turnstile/monitor")
async def configure_monitor(school_id: int, body: MonitorTarget, request: Request,
                            sessions: Sessions, pickup: Pickup) -> dict[str, str]:
    """Point the school's controller Monitor at our monitor route (token in the path)."""
    async with sessions() as session:
        school = await session.get(School, school_id)
    if school is None:
        raise not_found("School", school_id)
    base = school.turnstile_url or dev_turnstile_url(request.app.state.context.settings)
    if pickup.monitor_token is None:
        raise pickup_error(PickupErrorCode.TURNSTILE_UNAVAILABLE,
                           "Set ESTEIRA_PICKUP__MONITOR_TOKEN first.")
    token = pickup.monitor_token.get_secret_value()
    target = httpx.URL(body.public_base_url.rstrip("/")
                       + f"/api/pickup/turnstile/monitor/{school_id}/{token}")
    async with httpx.AsyncClient() as http:
        try:
            await turnstile_clients(pickup, http).for_url(base).configure_monitor(target)
        except TurnstileError as exc:
            raise pickup_error(PickupErrorCode.TURNSTILE_UNAVAILABLE, str(exc)) from None
    return {"monitor": f"{target.scheme}://{target.host}:{target.port}/…/{school_id}/***"}

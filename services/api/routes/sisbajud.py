"""Operator surface of the SISBAJUD executor: orders, notices, alarms, institutions, outbox,
human decisions and their resolution, orphan operations."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from sqlalchemy import func
from sqlmodel import SQLModel, col, select

from services.api.routes import sisbajud_admin
from services.api.routes.sisbajud_decisions import router as decisions_router
from services.api.routes.sisbajud_ops import router as ops_router
from shared.db.models import as_utc, utcnow
from shared.db.sisbajud_models import (
    SisbajudAlarm,
    SisbajudInstitution,
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
    SisbajudWrite,
)
from shared.errors import ErrorCode, EsteiraError

router = APIRouter()
operator = APIRouter(prefix="/api/sisbajud", tags=["sisbajud"])
Limit = Annotated[int, Query(ge=1, le=500)]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _row(row: SQLModel, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    return {_camel(k): v for k, v in row.model_dump(mode="json").items() if k not in drop}


async def _all(request: Request, statement) -> list[Any]:
    async with request.app.state.context.sessions() as session:
        return list((await session.exec(statement)).all())


@operator.get("/orders")
async def list_orders(request: Request, state: str | None = None, limit: Limit = 100,
                      offset: Annotated[int, Query(ge=0)] = 0) -> dict[str, Any]:
    """Orders with state, effect and reason, most recently changed first."""
    statement = select(SisbajudOrder).order_by(col(SisbajudOrder.updated_at).desc())
    if state:
        statement = statement.where(SisbajudOrder.state == state.upper())
    rows = await _all(request, statement.offset(offset).limit(limit))
    return {"items": [_row(r, ("run_id",)) for r in rows], "limit": limit, "offset": offset}


@operator.get("/orders/{order_id}")
async def get_order(order_id: str, request: Request) -> dict[str, Any]:
    """One order with its ledger writes and the results it queued."""
    async with request.app.state.context.sessions() as session:
        order = await session.get(SisbajudOrder, order_id)
        if order is None:
            raise EsteiraError(ErrorCode.NOT_FOUND, f"No order {order_id}.")
        writes = (await session.exec(select(SisbajudWrite).where(
            SisbajudWrite.order_id == order_id).order_by(SisbajudWrite.created_at))).all()
        results = (await session.exec(select(SisbajudOutbox).where(
            SisbajudOutbox.order_id == order_id).order_by(SisbajudOutbox.id))).all()
    return {**_row(order, ("run_id",)), "writes": [_row(w) for w in writes],
            "results": [_row(r) for r in results]}


@operator.get("/notices")
async def list_notices(request: Request, state: str | None = None,
                       limit: Limit = 100) -> dict[str, Any]:
    """Recorded deliveries, newest first; `state=PARKED` lists the parked ones."""
    statement = select(SisbajudNotice).order_by(col(SisbajudNotice.id).desc()).limit(limit)
    if state:
        statement = statement.where(SisbajudNotice.state == state.upper())
    return {"items": [_row(n) for n in await _all(request, statement)]}


@operator.get("/alarms")
async def list_alarms(request: Request, code: str | None = None,
                      limit: Limit = 100) -> dict[str, Any]:
    """Alarms, newest first."""
    statement = select(SisbajudAlarm).order_by(col(SisbajudAlarm.id).desc()).limit(limit)
    if code:
        statement = statement.where(SisbajudAlarm.code == code)
    return {"items": [_row(a) for a in await _all(request, statement)]}


@operator.get("/institutions")
async def list_institutions(request: Request) -> dict[str, Any]:
    """Configured and recorded institutions, with their owner and whether it is us."""
    settings = request.app.state.context.settings
    subject = settings.sisbajud.m2m_subject
    stored = {i.institution_id: i for i in await _all(request, select(SisbajudInstitution))}
    configured = {i.id: i for i in settings.sisbajud.institutions}
    items = []
    for institution_id in sorted(stored.keys() | configured.keys()):
        row, config = stored.get(institution_id), configured.get(institution_id)
        items.append({
            "institutionId": institution_id, "configured": config is not None,
            "ownerSubject": row.owner_subject if row else None,
            "ownedByThisExecutor": row is not None and row.owner_subject == subject,
            "createdAt": row.created_at.isoformat() if row else None,
            "crmMode": config.crm_mode if config else None,
            "organizationId": config.organization_id if config else None,
            "ledgerId": config.ledger_id if config else None,
        })
    return {"m2mSubject": subject, "items": items}


@operator.get("/outbox")
async def outbox(request: Request, state: str | None = None,
                 limit: Limit = 100) -> dict[str, Any]:
    """Depth and age of what waits to be sent, and the rows themselves."""
    async with request.app.state.context.sessions() as session:
        counts = dict((await session.exec(select(SisbajudOutbox.state, func.count())
                                          .group_by(SisbajudOutbox.state))).all())
        oldest: datetime | None = (await session.exec(
            select(func.min(SisbajudOutbox.created_at))
            .where(SisbajudOutbox.state == "PENDING"))).one()
        statement = select(SisbajudOutbox).order_by(col(SisbajudOutbox.id).desc()).limit(limit)
        if state:
            statement = statement.where(SisbajudOutbox.state == state.upper())
        rows = (await session.exec(statement)).all()
    age = (utcnow() - as_utc(oldest)).total_seconds() if oldest else 0.0
    return {"depth": counts.get("PENDING", 0), "oldestAgeSeconds": age, "counts": counts,
            "items": [_row(r) for r in rows]}


@operator.get("/orphans")
async def list_orphans(request: Request, block_alias: str | None = None,
                       limit: Limit = 100) -> dict[str, Any]:
    """Operations on block accounts this executor did not write, newest first."""
    statement = select(SisbajudOrphan).order_by(col(SisbajudOrphan.found_at).desc()).limit(limit)
    if block_alias:
        statement = statement.where(SisbajudOrphan.block_alias == block_alias)
    return {"items": [_row(o) for o in await _all(request, statement)]}


router.include_router(operator)
router.include_router(decisions_router)
router.include_router(ops_router)
router.include_router(sisbajud_admin.router)

"""What the operator reads: orders, notices, alarms, institutions, the outbox, orphans."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func
from sqlmodel import SQLModel, col, select

from activities.sisbajud.operator.trail import Sessions
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
from shared.settings import Settings


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _row(row: SQLModel, drop: tuple[str, ...] = ()) -> dict[str, Any]:
    return {_camel(k): v for k, v in row.model_dump(mode="json").items() if k not in drop}


async def _all(sessions: Sessions, statement) -> list[Any]:
    async with sessions() as session:
        return list((await session.exec(statement)).all())


async def list_orders(sessions: Sessions, state: str | None, limit: int,
                      offset: int) -> dict[str, Any]:
    """Orders with state, effect and reason, most recently changed first."""
    statement = select(SisbajudOrder).order_by(col(SisbajudOrder.updated_at).desc())
    if state:
        statement = statement.where(SisbajudOrder.state == state.upper())
    rows = await _all(sessions, statement.offset(offset).limit(limit))
    return {"items": [_row(r, ("run_id",)) for r in rows], "limit": limit, "offset": offset}


async def get_order(sessions: Sessions, order_id: str) -> dict[str, Any]:
    """One order with its ledger writes and the results it queued."""
    async with sessions() as session:
        order = await session.get(SisbajudOrder, order_id)
        if order is None:
            raise EsteiraError(ErrorCode.NOT_FOUND, f"No order {order_id}.")
        writes = (await session.exec(select(SisbajudWrite).where(
            SisbajudWrite.order_id == order_id).order_by(SisbajudWrite.created_at))).all()
        results = (await session.exec(select(SisbajudOutbox).where(
            SisbajudOutbox.order_id == order_id).order_by(SisbajudOutbox.id))).all()
    return {**_row(order, ("run_id",)), "writes": [_row(w) for w in writes],
            "results": [_row(r) for r in results]}


async def list_notices(sessions: Sessions, state: str | None, limit: int) -> dict[str, Any]:
    """Recorded deliveries, newest first; `state=PARKED` lists the parked ones."""
    statement = select(SisbajudNotice).order_by(col(SisbajudNotice.id).desc()).limit(limit)
    if state:
        statement = statement.where(SisbajudNotice.state == state.upper())
    return {"items": [_row(n) for n in await _all(sessions, statement)]}


async def list_alarms(sessions: Sessions, code: str | None, limit: int) -> dict[str, Any]:
    """Alarms, newest first."""
    statement = select(SisbajudAlarm).order_by(col(SisbajudAlarm.id).desc()).limit(limit)
    if code:
        statement = statement.where(SisbajudAlarm.code == code)
    return {"items": [_row(a) for a in await _all(sessions, statement)]}


async def list_institutions(sessions: Sessions, settings: Settings) -> dict[str, Any]:
    """Configured and recorded institutions, with their owner and whether it is us."""
    subject = settings.sisbajud.m2m_subject
    stored = {i.institution_id: i for i in await _all(sessions, select(SisbajudInstitution))}
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


async def outbox(sessions: Sessions, state: str | None, limit: int) -> dict[str, Any]:
    """Depth and age of what waits to be sent, and the rows themselves."""
    async with sessions() as session:
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


async def list_orphans(sessions: Sessions, block_alias: str | None,
                       limit: int) -> dict[str, Any]:
    """Operations on block accounts this executor did not write, newest first."""
    statement = select(SisbajudOrphan).order_by(col(SisbajudOrphan.found_at).desc()).limit(limit)
    if block_alias:
        statement = statement.where(SisbajudOrphan.block_alias == block_alias)
    return {"items": [_row(o) for o in await _all(sessions, statement)]}
